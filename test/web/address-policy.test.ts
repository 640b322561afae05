import { describe, expect, it } from "vitest";
import { addressRefusal, HostList, hostEntryProblem } from "../../services/web/address-policy.js";

describe("addressRefusal", () => {
  it.each([
    ["127.0.0.1", "a loopback address"],
    ["0.0.0.0", "an unspecified address"],
    ["10.9.8.7", "a private address"],
    ["172.31.255.255", "a private address"],
    ["192.168.0.1", "a private address"],
    ["169.254.169.254", "a link-local address (cloud metadata services live there)"],
    ["100.64.0.1", "a shared (carrier-grade NAT) address"],
    ["224.0.0.251", "a multicast address"],
    ["255.255.255.255", "the broadcast address"],
    ["240.0.0.1", "a reserved address"],
    ["::", "an unspecified address"],
    ["::1", "a loopback address"],
    ["::ffff:10.0.0.1", "a private address"],
    ["::ffff:169.254.169.254", "a link-local address (cloud metadata services live there)"],
    ["fe80::1%eth0", "a link-local address (cloud metadata services live there)"],
    ["fd00:ec2::254", "a private (unique local) address"],
    ["ff02::1", "a multicast address"],
    ["64:ff9b::a00:1", "a NAT64 address, which embeds an IPv4 one"],
    ["2002:a00:1::", "a 6to4 address, which embeds an IPv4 one"],
    ["2001::1", "a Teredo address, which embeds an IPv4 one"],
    ["example.com", "not an IP address"],
  ])("refuses %s: %s", (address, why) => {
    expect(addressRefusal(address)).toBe(why);
  });

  it.each([
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
    "[2a00:1450:4001::200e]",
  ])("lets %s through", (address) => {
    expect(addressRefusal(address)).toBeUndefined();
  });
});

describe("HostList", () => {
  const list = new HostList(["Example.com", "*.corp.example", "10.0.0.0/8", "192.0.2.7", "[2001:db8::1]"]);

  it("matches names exactly, and *. patterns on subdomains only", () => {
    expect(list.hasHost("example.com")).toBe(true);
    expect(list.hasHost("EXAMPLE.com.")).toBe(true);
    expect(list.hasHost("www.example.com")).toBe(false);
    expect(list.hasHost("wiki.corp.example")).toBe(true);
    expect(list.hasHost("a.b.corp.example")).toBe(true);
    expect(list.hasHost("corp.example")).toBe(false);
    expect(list.hasHost("evilcorp.example")).toBe(false);
  });

  it("matches addresses against its ranges, an IPv4-mapped address as its IPv4 one", () => {
    expect(list.hasAddress("10.200.0.1")).toBe(true);
    expect(list.hasAddress("::ffff:10.200.0.1")).toBe(true);
    expect(list.hasAddress("11.0.0.1")).toBe(false);
    expect(list.hasAddress("192.0.2.7")).toBe(true);
    expect(list.hasAddress("192.0.2.8")).toBe(false);
    expect(list.hasAddress("2001:db8::1")).toBe(true);
    expect(list.hasHost("[2001:db8::1]")).toBe(true);
    expect(list.hasHost("10.1.1.1")).toBe(true);
  });

  it("names what is wrong with a bad entry", () => {
    expect(hostEntryProblem("10.0.0.0/33")).toBe('"10.0.0.0/33" is not a CIDR range such as 10.0.0.0/8');
    expect(hostEntryProblem("http://example.com")).toMatch(/is not a host name/);
    expect(hostEntryProblem("*.example.com")).toBeUndefined();
    expect(hostEntryProblem("fd00::/8")).toBeUndefined();
  });
});

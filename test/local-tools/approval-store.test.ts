import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ApprovalStore } from "../../services/local-tools/approvals.js";

let dir: string;
let store: ApprovalStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "approval-store-"));
  store = new ApprovalStore(join(dir, "approvals.db"));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = (call_id: string, tenant_id = "acme", question = "Drop the table?") =>
  store.open({
    tenant_id,
    session_id: "ses_1",
    call_id,
    question,
    timeoutMs: 60_000,
    maxPending: 10,
    maxPendingPerTenant: 6,
  });

it("bounds the questions waiting for the operator, and each tenant's share of them", () => {
  for (let i = 0; i < 6; i++) ask(`call_a${i}`, "acme", `question ${i}`);
  expect(() => ask("call_a6", "acme", "one more")).toThrow(
    "6 approvals of this tenant are already waiting for an operator",
  );
  // another tenant still reaches the operator, up to the limit over all
  for (let i = 0; i < 4; i++) ask(`call_b${i}`, "globex", `question ${i}`);
  expect(() => ask("call_b4", "globex", "one more")).toThrow("10 approvals are already waiting");
  // an answered question leaves room
  const [waiting] = store.pending(1);
  if (!waiting) throw new Error("nothing pending");
  store.answer(waiting.id, "no", "ana");
  expect(ask("call_a7", "acme", "now there is room")).toMatchObject({ status: "pending" });
});

it("gives an approval a call holds to no other call; released undelivered, the next ask reuses it", () => {
  const first = ask("call_1");
  const second = ask("call_2");
  expect(second.id).not.toBe(first.id);

  // the first call was lost before an answer: its question goes to whoever asks next
  store.release(first.id);
  expect(ask("call_3")).toMatchObject({ id: first.id, call_id: "call_3", status: "pending" });

  // an answer that reached its call is done with: asking again is a new question
  store.answer(second.id, "yes", "ana");
  store.markDelivered(second.id);
  store.release(second.id);
  expect([first.id, second.id]).not.toContain(ask("call_4").id);
});

it("stops waiting at once for a call whose signal fired before it began to wait", async () => {
  const approval = ask("call_1");
  const settled = await Promise.race([
    store.waitFor(approval, AbortSignal.abort()),
    new Promise((resolve) => setTimeout(resolve, 1000, "still waiting")),
  ]);
  expect(settled).toBe("aborted");
});

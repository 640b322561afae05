#!/usr/bin/env node
import { runServiceCommand } from "../../kit/service-cli.js";
import type { WebConfig } from "./config.js";

const HELP = `web — Brain's web tool service: web_search through a search provider, web_fetch of public pages

Usage:
  web [-config FILE]          start the service (default config: web.json)
  web -config FILE -check     validate FILE and exit: 0 when valid, 2 with one problem per line
  web --help

Tools: web_search (when the config's search names a provider: "brave", "tavily" or "searxng") and
web_fetch, at http://LISTEN/tools/NAME. A provider's key is read from the environment variable
its api_key_env names. web_fetch reaches public addresses only: loopback, private, link-local and
metadata addresses are refused unless the config's hosts.allow lists them.
The bearer token is read from the environment variable the config's token_env names.
Example config: services/web/web.example.json`;

runServiceCommand<WebConfig>({
  name: "web",
  help: HELP,
  defaultConfig: "web.json",
  // loaded when needed, not at the top, so --help answers without loading validators and parsers
  load: async (path) => (await import("./config.js")).loadWebConfig(path),
  check: ({ search, fetch }) => ({
    ok: true,
    summary: `search: ${search?.provider ?? "none"}, robots.txt ${fetch.respectRobotsTxt ? "honoured" : "ignored"}`,
  }),
  start: async (config) => (await import("./service.js")).startWebService(config),
});

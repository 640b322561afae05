import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../src/config/load.js";
import { BRAIN_BIN, ROOT, runBrain, runNode } from "./helpers/cli.js";
import { closedPort } from "./helpers/ports.js";

const dir = mkdtempSync(join(tmpdir(), "brain-check-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ENV = { BRAIN_API_KEY: "k1", BRAIN_TOOLS_KEY: "t1" };

const echoBinding = () => ({
  name: "echo",
  description: "Echo text.",
  input_schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  url: "http://127.0.0.1:8081/tools/echo",
  token_env: "BRAIN_TOOLS_KEY",
  tenants: ["local"],
});

const baseConfig = () => ({
  tenants: [{ id: "local", api_key_env: "BRAIN_API_KEY" }],
  models: [{ name: "default", provider: "scripted" }],
  tools: [echoBinding()],
});

let counter = 0;
function check(config: unknown, env: Record<string, string> = ENV) {
  const path = join(dir, `config-${counter++}.json`);
  writeFileSync(path, typeof config === "string" ? config : JSON.stringify(config));
  return runBrain(["-config", path, "-check"], env);
}

function withTool(patch: Record<string, unknown>) {
  const config = baseConfig();
  config.tools = [{ ...echoBinding(), ...patch }];
  return config;
}

/** Every problem is on its own line of stderr, starting with its JSON path. */
function problems(result: { stderr: string }): string[] {
  return result.stderr.trim().split("\n").slice(0, -1);
}

describe("brain -check", () => {
  it("accepts a valid config with exit 0, with single and double dashes", () => {
    expect(check(baseConfig())).toMatchObject({ code: 0 });
    const path = join(dir, "valid.json");
    writeFileSync(path, JSON.stringify(baseConfig()));
    const result = runBrain(["--config", path, "--check"], ENV);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("valid (1 tenants, 1 models, 1 tools)");
  });

  it("validates the shipped example config", () => {
    const result = runBrain(["-config", "examples/brain.json", "-check"], ENV);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("reports an unreadable file and invalid JSON", () => {
    const missing = runBrain(["-config", join(dir, "nope.json"), "-check"], ENV);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("cannot read");
    const broken = check("{ not json");
    expect(broken.code).not.toBe(0);
    expect(problems(broken)[0]).toMatch(/^\(root\): not valid JSON/);
  });

  it("places a JSON syntax error by line and column, as an editor counts them", () => {
    const text =
      '{\n  "tenants": [\n    { "id": "local", "api_key_env": "BRAIN_API_KEY" },\n  ],\n  "models": []\n}\n';
    const result = check(text);
    expect(result.code).toBe(2);
    expect(problems(result)).toEqual([
      "(root): not valid JSON: line 4, column 3: found ']' where a value should be",
    ]);
  });

  it("reads a file that an editor began with a byte order mark", () => {
    expect(check(`\uFEFF${JSON.stringify(baseConfig())}`)).toMatchObject({ code: 0, stderr: "" });
  });

  it("suggests the known field one edit away from an unknown one", () => {
    const result = check({
      ...baseConfig(),
      listne: "127.0.0.1:0",
      tools: [{ ...echoBinding(), timeout_second: 3 }],
    });
    expect(problems(result)).toEqual([
      'listne: unknown field; did you mean "listen"?',
      'tools[0].timeout_second: unknown field; did you mean "timeout_seconds"?',
    ]);
  });

  it("ends a failed check with the count of problems, not with a start that was never asked for", () => {
    const result = check(withTool({ url: "ftp://x" }));
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain("did not start");
    expect(result.stderr.trim().split("\n").at(-1)).toMatch(/config-\d+\.json: 1 problem$/);
  });

  it("points a bare `brain` without a brain.json at -config and --help", () => {
    for (const args of [[], ["-check"]]) {
      const result = runNode(BRAIN_BIN, args, ENV, { cwd: dir });
      expect(result).toMatchObject({ code: 2, stdout: "" });
      expect(result.stderr).toBe(
        `brain: no config file named, and there is no brain.json in ${dir}: name one with -config FILE (brain --help says more)\n`,
      );
    }
  });

  it("rejects unknown fields anywhere", () => {
    const config = { ...baseConfig(), colour: "blue" } as Record<string, unknown>;
    (config.tenants as Record<string, unknown>[])[0] = {
      id: "local",
      api_key_env: "BRAIN_API_KEY",
      role: "x",
    };
    const result = check({ ...config, tools: [{ ...echoBinding(), retries: 3 }] });
    expect(result.code).not.toBe(0);
    expect(problems(result)).toEqual(
      expect.arrayContaining([
        "colour: unknown field",
        "tenants[0].role: unknown field",
        "tools[0].retries: unknown field",
      ]),
    );
  });

  it("rejects duplicate tool names", () => {
    const config = baseConfig();
    config.tools = [echoBinding(), echoBinding()];
    const result = check(config);
    expect(result.code).not.toBe(0);
    expect(problems(result)).toContain('tools[1].name: duplicate tool name "echo"');
  });

  it("rejects bad tool names", () => {
    const result = check(withTool({ name: "echo tool!" }));
    expect(result.code).not.toBe(0);
    expect(problems(result)[0]).toMatch(/^tools\[0\]\.name: must match pattern/);
  });

  it.each([
    ["ftp://127.0.0.1/echo", "tools[0].url: must be an absolute http or https URL"],
    ["/tools/echo", "tools[0].url: must be an absolute http or https URL"],
    [
      "http://user:pw@127.0.0.1/echo",
      "tools[0].url: must not contain user info; put credentials in token_env",
    ],
    ["http://127.0.0.1/echo#part", "tools[0].url: must not contain a fragment"],
  ])("rejects the tool URL %s", (url, expected) => {
    const result = check(withTool({ url }));
    expect(result.code).not.toBe(0);
    expect(problems(result)).toEqual([expected]);
  });

  it("rejects an input_schema or output_schema whose root is not an object schema", () => {
    const result = check(withTool({ input_schema: { type: "string" }, output_schema: { type: "string" } }));
    expect(problems(result)).toEqual([
      'tools[0].input_schema: the root must be an object schema ("type": "object")',
      'tools[0].output_schema: the root must be an object schema ("type": "object")',
    ]);
  });

  it("rejects an input_schema or output_schema that does not compile", () => {
    const result = check(
      withTool({
        input_schema: { type: "object", properties: { a: { type: "banana" } } },
        output_schema: { type: "object", required: "text" },
      }),
    );
    const lines = problems(result);
    expect(result.code).not.toBe(0);
    expect(lines[0]).toMatch(/^tools\[0\]\.input_schema: does not compile/);
    expect(lines[1]).toMatch(/^tools\[0\]\.output_schema: does not compile/);
  });

  it("accepts draft-07 schemas as well as 2020-12", () => {
    const result = check(
      withTool({
        input_schema: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: { items: { type: "array", items: [{ type: "string" }], additionalItems: false } },
        },
      }),
    );
    expect(result.stderr).toBe("");
  });

  it("rejects a token_env or api_key_env whose variable is unset or empty", () => {
    const unset = check(baseConfig(), { BRAIN_API_KEY: "k1" });
    expect(problems(unset)).toEqual(["tools[0].token_env: environment variable BRAIN_TOOLS_KEY is not set"]);
    const empty = check(baseConfig(), { BRAIN_API_KEY: "", BRAIN_TOOLS_KEY: "t" });
    expect(problems(empty)).toEqual(["tenants[0].api_key_env: environment variable BRAIN_API_KEY is empty"]);
    const model = baseConfig() as Record<string, unknown>;
    model.models = [
      {
        name: "default",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        api_key_env: "ANTHROPIC_API_KEY",
      },
    ];
    expect(problems(check(model))).toEqual([
      "models[0].api_key_env: environment variable ANTHROPIC_API_KEY is not set",
    ]);
  });

  it("checks telemetry.otlp_endpoint and the OpenTelemetry variables, never quoting a header", () => {
    const traced = { ...baseConfig(), telemetry: { otlp_endpoint: "http://127.0.0.1:4318" } };
    expect(check(traced).code).toBe(0);
    expect(problems(check({ ...baseConfig(), telemetry: { otlp_endpoint: "collector:4318" } }))).toEqual([
      'telemetry.otlp_endpoint: must be an absolute http or https URL, not "collector:4318"',
    ]);
    const malformed = check(traced, {
      ...ENV,
      OTEL_EXPORTER_OTLP_HEADERS: "collector-key-without-a-name",
      OTEL_TRACES_SAMPLER: "sometimes",
    });
    expect(problems(malformed)).toEqual([
      "OTEL_EXPORTER_OTLP_HEADERS: each entry must be key=value with a URL-encoded value",
      'OTEL_TRACES_SAMPLER: must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio, not "sometimes"',
    ]);
    expect(malformed.stderr).not.toContain("collector-key-without-a-name");
  });

  it("refuses a key or token no header can carry, naming the variable, in -check and at start", () => {
    const model = baseConfig() as Record<string, unknown>;
    model.models = [
      {
        name: "default",
        provider: "openai",
        model: "m",
        api_key_env: "OPENAI_API_KEY",
        context_window: 32_768,
      },
    ];
    const env = { BRAIN_API_KEY: "key-one\n", BRAIN_TOOLS_KEY: "tool token", OPENAI_API_KEY: "\u0001sk" };
    const expected = [
      "tenants[0].api_key_env: environment variable BRAIN_API_KEY holds a newline at its end;",
      "models[0].api_key_env: environment variable OPENAI_API_KEY holds a control character at its start;",
      "tools[0].token_env: environment variable BRAIN_TOOLS_KEY holds a space inside;",
    ];
    const checked = check(model, env);
    expect(checked.code).toBe(2);
    expect(problems(checked).map((line) => line.slice(0, line.indexOf(";") + 1))).toEqual(expected);
    const path = join(dir, "bad-key-start.json");
    writeFileSync(path, JSON.stringify(model));
    const started = runBrain(["-config", path], env);
    expect(started.code).toBe(2);
    expect(problems(started).map((line) => line.slice(0, line.indexOf(";") + 1))).toEqual(expected);
    for (const output of [checked, started]) {
      expect(`${output.stdout}${output.stderr}`).not.toMatch(/key-one|tool token|sk\b/);
    }
  });

  it("checks a postgres store: the variable, its URL, and that the server answers, never quoting the URL", async () => {
    const config = { ...baseConfig(), store: { kind: "postgres", url_env: "DATABASE_URL" } };
    expect(problems(check(config))).toEqual(["store.url_env: environment variable DATABASE_URL is not set"]);
    const secret = "pg-check-password-7d1c";
    const notUrl = check(config, { ...ENV, DATABASE_URL: `mysql://root:${secret}@127.0.0.1/db` });
    expect(problems(notUrl)).toEqual([
      "store.url_env: DATABASE_URL holds a mysql:// URL; expected postgres://user@host:5432/database",
    ]);
    const port = await closedPort();
    const away = check(config, { ...ENV, DATABASE_URL: `postgres://root:${secret}@127.0.0.1:${port}/test` });
    expect(away.code).toBe(2);
    expect(problems(away)).toEqual([
      expect.stringMatching(
        /^store\.url_env: cannot use the PostgreSQL server in DATABASE_URL: .*ECONNREFUSED/,
      ),
    ]);
    for (const result of [notUrl, away]) expect(result.stdout + result.stderr).not.toContain(secret);
    const extra = check({ ...config, store: { ...config.store, lease_seconds: 0, pool: 3 } }, ENV);
    expect(problems(extra).sort()).toEqual([
      "store.lease_seconds: must be >= 1",
      "store.pool: unknown field",
    ]);
  });

  it("rejects a binding naming an undeclared tenant", () => {
    const result = check(withTool({ tenants: ["local", "ghost"] }));
    expect(problems(result)).toEqual(['tools[0].tenants[1]: tenant "ghost" is not declared in tenants']);
  });

  it.each([
    [{ timeout_seconds: 0 }, "tools[0].timeout_seconds: must be > 0"],
    [{ timeout_seconds: 100_000 }, "tools[0].timeout_seconds: must be <= 86400"],
    [{ max_output_bytes: 0 }, "tools[0].max_output_bytes: must be >= 1"],
    [{ max_output_bytes: 2.5 }, "tools[0].max_output_bytes: must be integer"],
    // a result is stored as one string, and V8 makes none over 512 MiB
    [{ max_output_bytes: 1_073_741_824 }, "tools[0].max_output_bytes: must be <= 268435456"],
  ])("rejects out-of-range binding limits %j", (patch, expected) => {
    expect(problems(check(withTool(patch)))).toEqual([expected]);
  });

  it.each([
    [{ tool_headers_timeout_seconds: 0 }, "limits.tool_headers_timeout_seconds: must be > 0"],
    [{ max_steps_per_turn: 5000 }, "limits.max_steps_per_turn: must be <= 1000"],
    [{ max_request_bytes: 10 }, "limits.max_request_bytes: must be >= 1024"],
  ])("rejects out-of-range limits %j", (limits, expected) => {
    expect(problems(check({ ...baseConfig(), limits }))).toEqual([expected]);
  });

  it("accepts fractional time limits, so tests can run fast", () => {
    expect(
      check({ ...withTool({ timeout_seconds: 0.25 }), limits: { tool_headers_timeout_seconds: 0.05 } }).code,
    ).toBe(0);
  });

  it("reports every problem, not just the first", () => {
    const semantic = check(withTool({ url: "nope", tenants: ["ghost"] }));
    expect(problems(semantic)).toHaveLength(2);
    const structural = check({
      ...baseConfig(),
      listen: 5,
      limits: { max_steps_per_turn: 0 },
      models: [{ name: "m", provider: "nope" }],
    });
    expect(problems(structural)).toEqual([
      "listen: must be string",
      'models[0].provider: must be one of "anthropic", "openai", "scripted"',
      "limits.max_steps_per_turn: must be >= 1",
    ]);
    // a schema error hides none of the others: the entries it accepts are checked as usual
    const mixed = check(
      {
        ...baseConfig(),
        colour: "blue",
        tenants: [{ id: "local", api_key_env: "UNSET_KEY" }],
        tools: [
          { ...echoBinding(), url: "ftp://x/y", tenants: ["nobody"], token_env: "UNSET_TOKEN" },
          { ...echoBinding(), name: "bad name!" },
        ],
      },
      {},
    );
    expect(problems(mixed)).toEqual([
      "colour: unknown field",
      'tools[1].name: must match pattern "^[a-zA-Z0-9_-]{1,64}$"',
      "tenants[0].api_key_env: environment variable UNSET_KEY is not set",
      "tools[0].url: must be an absolute http or https URL",
      'tools[0].tenants[0]: tenant "nobody" is not declared in tenants',
      "tools[0].token_env: environment variable UNSET_TOKEN is not set",
    ]);
    // a binding's tenants are not checked against a tenant list the schema refused part of
    const refusedTenant = check({ ...baseConfig(), tenants: [{ id: "local", api_key_env: 7 }] });
    expect(problems(refusedTenant)).toEqual(["tenants[0].api_key_env: must be string"]);
  });

  it("refuses a max_tokens the model cannot write, naming the model and both numbers, in -check and at start", () => {
    const model = (extra: Record<string, unknown>) => ({
      provider: "anthropic",
      api_key_env: "PROVIDER_KEY",
      ...extra,
    });
    const config = {
      ...baseConfig(),
      models: [
        { name: "default", provider: "scripted" },
        model({ name: "haiku", model: "claude-3-5-haiku-latest", max_tokens: 32_000 }),
        // the answer Anthropic is asked for when max_tokens is unset must fit too
        model({ name: "own", model: "mine", context_window: 32_768, max_output_tokens: 4096 }),
        model({ name: "fits", model: "claude-3-5-haiku-latest", max_tokens: 8192 }),
        { ...model({ name: "gpt", model: "gpt-4o", max_tokens: 20_000 }), provider: "openai" },
      ],
    };
    const expected = [
      'models[1].max_tokens: 32000 tokens, more than model "claude-3-5-haiku-latest" can write (max_output_tokens 8192); the provider would refuse every call, so set max_tokens to 8192 or less',
      'models[2].max_tokens: unset, so requests ask for 8192 tokens, more than model "mine" can write (max_output_tokens 4096); the provider would refuse every call, so set max_tokens to 4096 or less',
      'models[4].max_tokens: 20000 tokens, more than model "gpt-4o" can write (max_output_tokens 16384); the provider would refuse every call, so set max_tokens to 16384 or less',
    ];
    const env = { ...ENV, PROVIDER_KEY: "p1" };
    expect(problems(check(config, env))).toEqual(expected);
    const path = join(dir, "max-tokens-start.json");
    writeFileSync(path, JSON.stringify(config));
    const started = runBrain(["-config", path], env);
    expect(started.code).not.toBe(0);
    expect(problems(started)).toEqual(expected);
  });

  it("refuses to start on an invalid config, with the same messages", () => {
    const path = join(dir, "bad-start.json");
    writeFileSync(path, JSON.stringify(withTool({ url: "ftp://x" })));
    const result = runBrain(["-config", path], ENV);
    expect(result.code).not.toBe(0);
    expect(problems(result)).toEqual(["tools[0].url: must be an absolute http or https URL"]);
    expect(result.stderr).toContain("Brain did not start");
  });

  it("prints help and rejects unknown flags", () => {
    const help = runBrain(["--help"]).stdout;
    expect(help).toContain("brain -config FILE -check");
    // every command's summary starts in one column, after its usage and two spaces at least
    const lines = help.split("\n").filter((line) => line.startsWith("  brain ") && !line.includes("--help"));
    const columns = lines.map((line) => /^( {2}brain \S.*?\S {2,})\S/.exec(line)?.[1]?.length);
    expect(columns.length).toBeGreaterThan(5);
    expect(new Set(columns)).toEqual(new Set([columns[0]]));
    expect(columns[0]).toBeDefined();
    const bad = runBrain(["-bogus"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Unknown option");
  });

  it("answers a command named like a property every object has as the unknown command it is", () => {
    for (const name of ["constructor", "toString", "__proto__"]) {
      const run = runBrain([name]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        new RegExp(`^brain: unknown command "${name}"\n\nbrain — an agent server\n`),
      );
    }
    const tools = runBrain(["tools", "toString"]);
    expect(tools.code).toBe(2);
    expect(tools.stderr).toMatch(/^brain tools: unknown subcommand "toString"\n/);
  });
});

describe("defaults", () => {
  it("fills in what a config leaves out, as the published schema says", () => {
    const loaded = resolveConfig(baseConfig(), { env: ENV, baseDir: dir });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    const { config } = loaded;
    expect(config.listen).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(config.store).toEqual({ kind: "sqlite", path: join(dir, "data/brain.db") });
    expect(config.limits).toEqual({
      tool_headers_timeout_seconds: 30,
      max_steps_per_turn: 32,
      max_request_bytes: 1_048_576,
      max_progress_bytes: 65_536,
      request_timeout_seconds: 30,
      approval_timeout_seconds: 3600,
      max_queued_messages: 100,
      max_tokens_per_turn: 0,
    });
    expect(config.tools.get("echo")).toMatchObject({
      timeoutMs: 300_000,
      maxOutputBytes: 1_048_576,
      maxModelBytes: 65_536,
      inspectSession: false,
      approval: false,
    });
    const published = JSON.parse(readFileSync(join(ROOT, "schema/brain.schema.json"), "utf8"));
    const binding = published.properties.tools.items.properties;
    expect([binding.timeout_seconds.default, binding.max_output_bytes.default]).toEqual([300, 1_048_576]);
  });
});

describe("the published config schema", () => {
  const published = JSON.parse(readFileSync(join(ROOT, "schema/brain.schema.json"), "utf8"));

  it("is the schema Brain validates with", () => {
    expect(JSON.parse(runBrain(["schema"]).stdout)).toEqual(published);
  });

  it("is not printed for --help, which explains the command instead", () => {
    for (const flag of ["--help", "-h", "-help"]) {
      const help = runBrain(["schema", flag]);
      expect(help).toMatchObject({ code: 0, stderr: "" });
      expect(help.stdout).toMatch(/^brain schema — print the host config's JSON Schema\n\nUsage:\n/);
    }
    const extra = runBrain(["schema", "brain.json"]);
    expect(extra).toMatchObject({ code: 2, stdout: "" });
    expect(extra.stderr).toMatch(/^brain schema: Unexpected argument 'brain.json'/);
  });

  it("validates the example configs, and rejects a broken one", () => {
    const ajv = new Ajv2020({ strict: false, discriminator: true });
    const validate = ajv.compile(published);
    for (const file of ["examples/brain.json"]) {
      const config = JSON.parse(readFileSync(join(ROOT, file), "utf8"));
      expect(validate(config), `${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    expect(validate({ tenants: [], models: [], tools: [{ name: "x" }] })).toBe(false);
  });
});

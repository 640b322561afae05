import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import standaloneModule from "ajv/dist/standalone/index.js";
import { build, type Plugin } from "esbuild";
import { protocolAjv } from "../protocol/validation.js";
import { ANSWER_SCHEMAS } from "../src/client/answers.js";

/**
 * Builds the web console into dist/web/console/: its page, its stylesheet, and one script bundling
 * the console with the client and the protocol. The page runs under a Content-Security-Policy that
 * allows no eval, so the client's answer validators go in as Ajv standalone code compiled here from
 * the same schemas, in place of src/client/answers.ts (which compiles them at run time).
 */

// run from dist/web/: the repository is two folders up
// a CommonJS module whose default export Node hands over as the module object's `default`
const standaloneCode = standaloneModule.default;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const OUT = join(ROOT, "dist", "web", "console");

function precompiledAnswers(): string {
  const ajv = protocolAjv({ code: { source: true, esm: true } });
  const names = Object.keys(ANSWER_SCHEMAS);
  for (const [name, schema] of Object.entries(ANSWER_SCHEMAS)) ajv.addSchema(schema, name);
  const code = standaloneCode(ajv, Object.fromEntries(names.map((name) => [name, name])));
  return `${code}\nexport const answers = { ${names.join(", ")} };\n`;
}

const answersPlugin: Plugin = {
  name: "precompiled-answers",
  setup(builder) {
    builder.onResolve({ filter: /\/answers\.js$/ }, (args) =>
      args.importer.endsWith(join("src", "client", "client.ts"))
        ? { path: "precompiled-answers", namespace: "precompiled" }
        : undefined,
    );
    // resolved from the repository, where the standalone code's require()s of Ajv's runtime are
    builder.onLoad({ filter: /.*/, namespace: "precompiled" }, () => ({
      contents: precompiledAnswers(),
      loader: "js",
      resolveDir: ROOT,
    }));
  },
};

mkdirSync(OUT, { recursive: true });
await build({
  entryPoints: [join(ROOT, "web", "console", "main.ts")],
  outfile: join(OUT, "console.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "chrome120",
  minify: true,
  sourcemap: true,
  legalComments: "linked",
  plugins: [answersPlugin],
  logLevel: "warning",
});
for (const file of ["index.html", "console.css"])
  copyFileSync(join(ROOT, "web", "console", file), join(OUT, file));

// Bundles src/extension.ts and its dependencies (vscode-languageclient, smol-toml) into one file,
// dist/extension.js, which is all the .vsix carries (`vsce package --no-dependencies`).
// `node esbuild.mjs` builds minified for release; `--dev` keeps it readable with a source map;
// `--tests` builds the unit tests (src/test/*.test.ts, plain Node.js, no VS Code; and the *.worker.ts
// they start) into out/test/.
import * as fs from "node:fs";
import * as esbuild from "esbuild";

const dev = process.argv.includes("--dev");
const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node18", // VS Code 1.85's extension host runs Node.js 18
  logLevel: "warning",
};

if (process.argv.includes("--tests")) {
  await esbuild.build({
    ...common,
    // the tests, and the scripts they run in worker threads
    entryPoints: fs
      .readdirSync("src/test")
      .filter((f) => f.endsWith(".test.ts") || f.endsWith(".worker.ts"))
      .map((f) => `src/test/${f}`),
    outdir: "out/test",
    sourcemap: true,
  });
} else {
  await esbuild.build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    external: ["vscode"], // given by the extension host
    minify: !dev,
    sourcemap: dev,
  });
}

// Bundles src/extension.ts and its dependencies (vscode-languageclient, smol-toml) into one file,
// dist/extension.js, which is all the .vsix carries (`vsce package --no-dependencies`).
// `node esbuild.mjs` builds minified for release; `--dev` keeps it readable with a source map.
import * as esbuild from "esbuild";

const dev = process.argv.includes("--dev");

await esbuild.build({
  entryPoints: ["src/extension.ts"],
  outfile: "dist/extension.js",
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node18", // VS Code 1.85's extension host runs Node.js 18
  external: ["vscode"], // given by the extension host
  minify: !dev,
  sourcemap: dev,
  logLevel: "warning",
});

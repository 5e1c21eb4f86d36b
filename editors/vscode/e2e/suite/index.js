// The end-to-end suite, run by VS Code inside its extension host (the `extensionTestsPath` of
// run.mjs). It checks the installed templating extension against a workspace of real agent code
// described by the JSON file named in TEMPLATING_E2E_CONFIG (written by tests/test_vscode.py):
// the findings `templating lint` reports arrive as VS Code diagnostics, a hover on a key names
// where the key is written, completion inside an instruction offers a state key, and quick fixes
// apply. Two other workspaces check how the extension finds `templating` (`venv`: in the
// workspace's own .venv, nowhere else; `missing`: nowhere, in an ADK project: one notification).
// VS Code ends the extension host when `run` settles: a rejection is a failed run (exit 1).
// Every wait is bounded (`waitSeconds`) so that a hung server fails the run; it judges no speed.
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const vscode = require("vscode");

const SEVERITIES = ["error", "warning", "info", "hint"]; // the CLI's names for VS Code's levels

function log(line) {
  // The extension host's stdout ends up in code-server's log, which run.mjs shows on failure.
  console.log(`[templating-e2e] ${line}`);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it returns something other than undefined, or fails after `seconds`. */
async function waitFor(what, seconds, probe) {
  const deadline = Date.now() + seconds * 1000;
  let last;
  for (;;) {
    last = await probe();
    if (last.done) {
      return last.value;
    }
    if (Date.now() > deadline) {
      assert.fail(`waited ${seconds} s for ${what}; last seen: ${JSON.stringify(last.value, null, 1)}`);
    }
    await sleep(100);
  }
}

function codeOf(diagnostic) {
  const code = diagnostic.code;
  return typeof code === "object" && code !== null ? String(code.value) : code === undefined ? null : String(code);
}

/** A diagnostic as the config writes the CLI's findings: code, range, severity, message. */
function shape(diagnostic) {
  const { start, end } = diagnostic.range;
  return {
    code: codeOf(diagnostic),
    range: [start.line, start.character, end.line, end.character],
    severity: SEVERITIES[diagnostic.severity],
    message: diagnostic.message,
  };
}

function key(finding) {
  return JSON.stringify([finding.range, finding.code, finding.severity, finding.message]);
}

/** The server's diagnostics of `uri`, sorted like the config's. */
function found(uri) {
  return vscode.languages
    .getDiagnostics(uri)
    .filter((d) => d.source === "templating")
    .map(shape)
    .sort((a, b) => key(a).localeCompare(key(b)));
}

function same(actual, expected) {
  return JSON.stringify(actual.map(key)) === JSON.stringify(expected.map(key));
}

function position(where) {
  return new vscode.Position(where.line, where.character);
}

async function checkExtension(config) {
  const extension = vscode.extensions.getExtension(config.extension.id);
  assert.ok(extension, `the extension ${config.extension.id} is not installed`);
  // The installed .vsix, not a development copy of the sources.
  assert.ok(
    extension.extensionPath.startsWith(config.extension.extensionsDir),
    `${config.extension.id} runs from ${extension.extensionPath}, not from ${config.extension.extensionsDir}`,
  );
  assert.equal(extension.packageJSON.version, config.extension.version);
  await extension.activate();
  log(`${config.extension.id} ${extension.packageJSON.version} active from ${extension.extensionPath}`);
}

async function checkDiagnostics(config) {
  const documents = {};
  for (const path of Object.keys(config.diagnostics)) {
    documents[path] = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
  }
  for (const [path, expected] of Object.entries(config.diagnostics)) {
    const sorted = [...expected].sort((a, b) => key(a).localeCompare(key(b)));
    const uri = documents[path].uri;
    await waitFor(`the findings of ${path}`, config.waitSeconds, () => {
      const actual = found(uri);
      return { done: same(actual, sorted), value: { expected: sorted, actual } };
    });
    log(`diagnostics of ${path}: ${sorted.map((f) => f.code).join(", ") || "none"}, as the CLI reports`);
  }
  return documents;
}

async function checkHover(config) {
  const { path, contains } = config.hover;
  const uri = vscode.Uri.file(path);
  await vscode.workspace.openTextDocument(uri);
  const text = await waitFor(`a hover at ${path}:${config.hover.line + 1}`, config.waitSeconds, async () => {
    const hovers = await vscode.commands.executeCommand("vscode.executeHoverProvider", uri, position(config.hover));
    const shown = (hovers || [])
      .flatMap((hover) => hover.contents)
      .map((part) => (typeof part === "string" ? part : part.value))
      .join("\n");
    return { done: contains.every((part) => shown.includes(part)), value: shown };
  });
  log(`hover names the writer: ${JSON.stringify(text)}`);
}

async function checkCompletion(config) {
  const { path, label } = config.completion;
  const uri = vscode.Uri.file(path);
  const labels = await waitFor(`completion offering ${label}`, config.waitSeconds, async () => {
    const list = await vscode.commands.executeCommand(
      "vscode.executeCompletionItemProvider",
      uri,
      position(config.completion),
    );
    const items = (list ? list.items : []).filter((item) => item.kind === vscode.CompletionItemKind.Variable);
    const names = items.map((item) => (typeof item.label === "string" ? item.label : item.label.label));
    return { done: names.includes(label), value: names };
  });
  log(`completion offers the state keys ${labels.join(", ")}`);
}

async function checkFix(config, fix) {
  const uri = vscode.Uri.file(fix.path);
  const document = await vscode.workspace.openTextDocument(uri);
  const range = new vscode.Range(position(fix.start), position(fix.end));
  assert.equal(document.getText(range), fix.replaced, `the finding's text in ${fix.path}`);
  const action = await waitFor(`the quick fix "${fix.title}"`, config.waitSeconds, async () => {
    const actions = await vscode.commands.executeCommand(
      "vscode.executeCodeActionProvider",
      uri,
      range,
      vscode.CodeActionKind.QuickFix.value,
      10, // resolve up to 10 actions, in case the server sends their edits lazily
    );
    const titles = (actions || []).map((a) => a.title);
    const wanted = (actions || []).find((a) => a.title === fix.title);
    return { done: wanted !== undefined, value: wanted || titles };
  });
  assert.ok(action.edit, `the quick fix "${fix.title}" carries no edit`);
  assert.ok(await vscode.workspace.applyEdit(action.edit), `VS Code did not apply "${fix.title}"`);
  const text = document.getText();
  const fixedAt = document.offsetAt(position(fix.start));
  assert.equal(text.slice(fixedAt, fixedAt + fix.with.length), fix.with, `the fixed text in ${fix.path}`);
  assert.equal(text.length, fix.length, `only the flagged text changed in ${fix.path}`);
  // The server reads the edited (unsaved) text: its findings become what the CLI reports for the fixed file.
  const after = [...fix.after].sort((a, b) => key(a).localeCompare(key(b)));
  await waitFor(`the findings of ${fix.path} after the fix`, config.waitSeconds, () => {
    const actual = found(uri);
    return { done: same(actual, after), value: { expected: after, actual } };
  });
  log(`quick fix "${fix.title}" applied in ${fix.path}`);
}

/** Shows a finding and its hover, then lets run.mjs take the screenshot (it writes `done`). */
async function pose(config) {
  const { path, line, character, ready, done } = config.screenshot;
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
  const editor = await vscode.window.showTextDocument(document, { preview: false });
  const at = new vscode.Position(line, character);
  editor.selection = new vscode.Selection(at, at);
  editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenter);
  await vscode.commands.executeCommand("workbench.actions.view.problems");
  await vscode.commands.executeCommand("workbench.action.focusActiveEditorGroup");
  await sleep(500);
  await vscode.commands.executeCommand("editor.action.showHover");
  fs.writeFileSync(ready, "posed\n");
  await waitFor("the screenshot", config.waitSeconds, () => ({ done: fs.existsSync(done), value: null }));
}

/** The extension's output channel (`templating`) as VS Code writes it under the user data's logs. */
function serverLog(config) {
  const files = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else if (/^\d+-templating\.log$/.test(entry.name) && dir.includes("output_logging_")) {
        files.push(full);
      }
    }
  };
  if (fs.existsSync(config.logs)) {
    walk(config.logs);
  }
  return files.map((file) => fs.readFileSync(file, "utf8")).join("\n");
}

/** Waits until the server log holds `count` lines (at least) containing `text`; the whole log. */
async function waitForLog(config, text, count = 1) {
  await waitFor(`${count} line(s) of the server log with ${JSON.stringify(text)}`, config.waitSeconds, () => {
    const shown = serverLog(config);
    return { done: shown.split("\n").filter((line) => line.includes(text)).length >= count, value: shown.slice(-3000) };
  });
  return serverLog(config);
}

/** Asks run.mjs about the page (it drives the browser): the notifications shown, or a click. */
async function askPage(config, request) {
  const id = `${Date.now()}-${Math.random()}`;
  fs.writeFileSync(`${config.ui.ask}.tmp`, JSON.stringify({ id, ...request }));
  fs.renameSync(`${config.ui.ask}.tmp`, config.ui.ask);
  const answer = await waitFor(`the page's answer to ${request.what}`, config.waitSeconds, () => {
    if (!fs.existsSync(config.ui.answer)) {
      return { done: false, value: null };
    }
    const read = JSON.parse(fs.readFileSync(config.ui.answer, "utf8"));
    return { done: read.id === id, value: read };
  });
  fs.unlinkSync(config.ui.answer);
  assert.equal(answer.error, undefined, `run.mjs could not answer ${request.what}: ${answer.error}`);
  return answer;
}

/** The exact texts of each agent's preview, for comparing the panel's with the CLI's. */
function texts(agents) {
  return agents.map((a) => ({
    agent: a.agent,
    system_instruction: a.system_instruction,
    instruction_turn: a.instruction_turn,
    tools: a.tools,
    exact: a.exact,
  }));
}

/**
 * The prompt preview: the code lens on an agent opens the side panel, which shows what
 * `templating preview --format json` prints for that agent; an unsaved edit of the prompt module the
 * agent's instruction comes from shows in the panel (its text read from the page too).
 */
async function checkPreview(config, api) {
  const { path: agentPath, agent, expected, edit } = config.preview;
  const uri = vscode.Uri.file(agentPath);
  const document = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(document, { preview: false });
  const lens = await waitFor(`a "Preview prompt" code lens on ${agent}`, config.waitSeconds, async () => {
    const lenses = (await vscode.commands.executeCommand("vscode.executeCodeLensProvider", uri, 100)) || [];
    const wanted = lenses.find(
      (l) => l.command && l.command.title === "Preview prompt" && (l.command.arguments || [])[1] === agent,
    );
    return { done: wanted !== undefined, value: wanted || lenses.map((l) => l.command && l.command.title) };
  });
  await vscode.commands.executeCommand(lens.command.command, ...lens.command.arguments);
  const shown = await waitFor(`the preview of ${agent} in the panel`, config.waitSeconds, () => {
    const answer = api.preview.answer;
    const done = answer !== undefined && JSON.stringify(texts(answer.agents)) === JSON.stringify(texts(expected));
    return { done, value: answer };
  });
  log(`the panel shows what templating preview prints for ${agent} (${shown.agents.length} agent)`);
  // an unsaved edit of another file (the prompt module): the panel follows it
  const target = await vscode.workspace.openTextDocument(vscode.Uri.file(edit.path));
  const at = target.positionAt(target.getText().indexOf(edit.after) + edit.after.length);
  const change = new vscode.WorkspaceEdit();
  change.insert(target.uri, at, edit.insert);
  const started = Date.now();
  assert.ok(await vscode.workspace.applyEdit(change), "VS Code did not apply the edit");
  const updated = await waitFor("the panel to show the edit", config.waitSeconds, () => {
    const answer = api.preview.answer;
    const text = answer && answer.agents[0] ? answer.agents[0].system_instruction || "" : "";
    return { done: text.includes(edit.after + edit.insert), value: text.slice(0, 400) };
  });
  assert.ok(target.isDirty, "the edit stays unsaved");
  log(`the panel followed an unsaved edit in ${Date.now() - started} ms (informative: not judged here)`);
  const page = await waitFor("the panel's text on the page", config.waitSeconds, async () => {
    const answer = await askPage(config, { what: "webview", element: "templating-preview" });
    return { done: answer.text.includes(edit.insert.trim()), value: answer.text.slice(0, 400) };
  });
  assert.ok(page.includes(`What ${agent}'s model sees`), page.slice(0, 200));
  log(`the page shows the preview: ${JSON.stringify(updated.slice(0, 80))}`);
  // the edit reverted (the file as on disk): the panel shows the saved text again, then it is closed
  await vscode.window.showTextDocument(target, { preview: false });
  await vscode.commands.executeCommand("workbench.action.files.revert");
  await waitFor("the panel to show the reverted text", config.waitSeconds, () => {
    const answer = api.preview.answer;
    const done = !target.isDirty && JSON.stringify(texts(answer.agents)) === JSON.stringify(texts(expected));
    return { done, value: { dirty: target.isDirty, answer: answer.agents.map((a) => a.agent) } };
  });
  const tabs = vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .filter((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.endsWith("templating.preview"));
  assert.equal(tabs.length, 1, `one preview panel, not ${tabs.length}`);
  await vscode.window.tabGroups.close(tabs);
  log("the panel followed the revert and was closed");
}

/** A workspace whose own .venv holds templating, none elsewhere: the server runs from it, fixes apply. */
async function checkVenv(config) {
  await checkDiagnostics(config);
  const shown = await waitForLog(config, config.venv.running);
  log(`the server runs from the workspace's .venv: ${shown.split("\n").find((l) => l.includes(config.venv.running))}`);
  for (const fix of config.fixes) {
    await checkFix(config, fix);
  }
}

/** The notifications whose message starts with `message`, as the notification center lists them. */
async function listed(config, message) {
  // VS Code shows no toasts to a smoke-test driver: the center lists every notification (and replaces
  // one shown again with the same message and buttons, hence the clearing below).
  await vscode.commands.executeCommand("notifications.showList");
  const answer = await askPage(config, { what: "notifications" });
  return answer.notifications.filter((n) => n.message.startsWith(message));
}

/**
 * A workspace using Google ADK, templating nowhere: one notification says so, with its buttons; a
 * button works; a later restart (the include globs changed) does not show it again.
 */
async function checkMissing(config) {
  const { message, buttons, click, trigger } = config.missing;
  await waitForLog(config, `notification: ${message}`);
  const first = await waitFor("the notification on the page", config.waitSeconds, async () => {
    const shown = await listed(config, message);
    return { done: shown.length > 0, value: shown };
  });
  assert.equal(first.length, 1, JSON.stringify(first));
  assert.deepEqual(first[0].buttons, buttons);
  log(`notification shown: ${JSON.stringify(first[0])}`);
  await askPage(config, { what: "click", message, button: click.button });
  await waitFor(`the ${click.opens} after a click on ${click.button}`, config.waitSeconds, () => {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    return { done: tab !== undefined && tab.label === click.opens, value: tab && tab.label };
  });
  log(`${click.button} opened ${click.opens}`);
  await vscode.commands.executeCommand("notifications.clearAll");
  assert.deepEqual(await listed(config, message), [], "the notification center was not cleared");
  // a restart the user did not ask for: looks again, says nothing
  fs.writeFileSync(trigger.path, trigger.text);
  await waitForLog(config, trigger.restarted);
  const shown = await waitForLog(config, "already shown in this workspace: no notification");
  const told = shown.split("\n").filter((line) => line.includes("notification: ")).length;
  assert.equal(told, 1, `the notification was shown ${told} times:\n${shown}`);
  assert.deepEqual(await listed(config, message), [], "the notification came back after a restart");
  log("shown once: a later restart did not show it again");
}

async function run() {
  const config = JSON.parse(fs.readFileSync(process.env.TEMPLATING_E2E_CONFIG, "utf8"));
  await checkExtension(config);
  if (config.venv) {
    await checkVenv(config);
  } else if (config.missing) {
    await checkMissing(config);
  } else {
    await checkDiagnostics(config);
    await checkHover(config);
    await checkCompletion(config);
    if (config.preview) {
      const api = vscode.extensions.getExtension(config.extension.id).exports;
      await checkPreview(config, api);
    }
    if (config.screenshot) {
      await pose(config); // before the fixes: the screenshot shows the corpus's findings as they are
    }
    for (const fix of config.fixes) {
      await checkFix(config, fix);
    }
  }
  log("all checks passed");
}

module.exports = {
  run: () =>
    run().catch((error) => {
      console.error(`[templating-e2e] FAILED: ${error && error.stack ? error.stack : error}`);
      throw error;
    }),
};

/* global WebSocket -- Node 20: behind --experimental-websocket, which this process is run with */
// Loads a page in headless Chromium and reports it through the DevTools protocol: the result of
// a DOM query run in the page, what the browser logged (a Content-Security-Policy violation is
// logged), whether a dialog opened (alert), and a PNG screenshot of the whole page.
//
//   node --experimental-websocket test/helpers/chromium-dom.mjs CHROMIUM URL SCREENSHOT EXPRESSION
//
// Plain JavaScript run by node in a process of its own: Node 20 has a WebSocket only behind
// --experimental-websocket, which the test workers do not get. Prints one JSON line on stdout.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [chromium, url, screenshot, expression] = process.argv.slice(2);
let profile = '';
let browser;

function fail(message) {
  process.stderr.write(`${message}\n`);
  killGroup();
  removeProfile();
  process.exit(1);
}

const watchdog = setTimeout(() => fail('chromium did not answer within 60 s'), 60_000);

/** Starts Chromium in a process group of its own; resolves with its DevTools endpoint. */
function launch() {
  profile = mkdtempSync(join(tmpdir(), 'amsync-chromium-'));
  browser = spawn(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--hide-scrollbars', '--window-size=1280,1400', '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  return new Promise((resolve) => {
    let text = '';
    browser.stderr.on('data', (chunk) => {
      text += chunk;
      const found = /DevTools listening on (ws:\/\/\S+)/.exec(text);
      if (found) resolve(found[1]);
    });
    browser.once('exit', (code) => fail(`chromium exited (${code}) before it listened: ${text}`));
  });
}

const endpoint = await launch();
browser.removeAllListeners('exit');
browser.on('exit', (code) => fail(`chromium exited (${code}) while the page was being read`));

const socket = new WebSocket(endpoint);
await new Promise((resolve, reject) => {
  socket.onopen = resolve;
  socket.onerror = () => reject(new Error('cannot connect to chromium'));
});
let nextId = 0;
const pending = new Map();
const waiters = [];
const logs = [];
const dialogs = [];
socket.onmessage = (event) => {
  const message = JSON.parse(String(event.data));
  if (message.id !== undefined) {
    const p = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) p.reject(new Error(`${message.error.message}`));
    else p.resolve(message.result);
    return;
  }
  if (message.method === 'Log.entryAdded') logs.push(`${message.params.entry.level}: ${message.params.entry.text}`);
  if (message.method === 'Runtime.consoleAPICalled') logs.push(`console.${message.params.type}`);
  if (message.method === 'Runtime.exceptionThrown') logs.push(`exception: ${message.params.exceptionDetails.text}`);
  if (message.method === 'Page.javascriptDialogOpening') dialogs.push(message.params.message);
  for (const w of waiters.splice(0)) if (!w(message)) waiters.push(w);
};
const send = (method, params = {}, sessionId) =>
  new Promise((resolve, reject) => {
    nextId += 1;
    pending.set(nextId, { resolve, reject });
    socket.send(JSON.stringify({ id: nextId, method, params, ...(sessionId ? { sessionId } : {}) }));
  });
const event = (method) =>
  new Promise((resolve) => {
    waiters.push((m) => {
      if (m.method !== method) return false;
      resolve(m.params);
      return true;
    });
  });

try {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  for (const domain of ['Page', 'Runtime', 'Log']) await send(`${domain}.enable`, {}, sessionId);
  const loaded = event('Page.loadEventFired');
  const navigation = await send('Page.navigate', { url }, sessionId);
  if (navigation.errorText) fail(`cannot load ${url}: ${navigation.errorText}`);
  await loaded;
  const evaluated = await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId);
  if (evaluated.exceptionDetails) fail(`the query threw: ${JSON.stringify(evaluated.exceptionDetails)}`);
  const shot = await send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true }, sessionId);
  writeFileSync(screenshot, Buffer.from(shot.data, 'base64'));
  process.stdout.write(`${JSON.stringify({ dom: evaluated.result.value, logs, dialogs })}\n`);
  // Its exit on this close is expected: the watch for an early exit goes first (under load the
  // exit came before the listener was removed, and a good run failed as "exited (0)").
  browser.removeAllListeners('exit');
  await send('Browser.close').catch(() => undefined);
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
clearTimeout(watchdog);
socket.close();
// It may have exited on Browser.close already: then there is no exit left to wait for.
const exited = browser.exitCode !== null || browser.signalCode !== null ? Promise.resolve() : new Promise((resolve) => browser.once('exit', resolve));
// The whole process group: Chromium's helpers (renderer, crashpad) outlive the browser process
// and go on writing into the profile, which then cannot be removed (ENOTEMPTY in CI).
killGroup();
await exited;
removeProfile();

function killGroup() {
  if (browser === undefined) return;
  try {
    process.kill(-browser.pid, 'SIGKILL');
  } catch {
    browser.kill('SIGKILL');
  }
}

/** A temporary profile a straggling helper still writes to is left behind rather than failing the check. */
function removeProfile() {
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  } catch (error) {
    process.stderr.write(`note: the Chromium profile ${profile} could not be removed: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}

// Firefox for the cross-engine suite: puppeteer-core drives Debian's Firefox ESR over
// WebDriver BiDi, which Firefox has built in (no driver program to download or trust).
//
// engine_drivers.py starts this with node and writes one command per line on its stdin,
// {id, verb, args}; each gets one line back on stdout, {id, ok, value} or {id, ok: false,
// error}. The first line out is {ready, version, pid} once Firefox is up. End of stdin
// (or the verb "close") closes Firefox and ends the process.
//
//   node firefox_bridge.mjs FIREFOX_EXECUTABLE WIDTH HEIGHT

import { createInterface } from "node:readline";
import puppeteer from "puppeteer-core";

const [executablePath, width, height] = process.argv.slice(2);

const browser = await puppeteer.launch({
  browser: "firefox",
  executablePath,
  headless: true,
  defaultViewport: { width: Number(width), height: Number(height) },
});
const page = (await browser.pages())[0] ?? (await browser.newPage());
// The default viewport is given to the pages puppeteer opens, not to the window's first one.
await page.setViewport({ width: Number(width), height: Number(height) });

// Console errors and uncaught exceptions of the page and its workers (BiDi reports both).
let errors = [];
page.on("console", (message) => {
  if (message.type() === "error") errors.push(message.text());
});
page.on("pageerror", (error) => errors.push(String(error?.message ?? error)));

const reply = (line) => process.stdout.write(JSON.stringify(line) + "\n");

const verbs = {
  open: ({ url }) => page.goto(url, { waitUntil: "load" }).then(() => null),
  // `expression` is a whole call, `(function)(argument)`: the page's promise is awaited.
  evaluate: ({ expression }) => page.evaluate(expression),
  click: ({ selector }) => page.click(selector),
  // A chord is "Control+End"; each of `keys` is pressed and released in turn.
  press: async ({ keys }) => {
    for (const key of keys) {
      const parts = key.split("+");
      const modifiers = parts.slice(0, -1);
      for (const modifier of modifiers) await page.keyboard.down(modifier);
      await page.keyboard.press(parts.at(-1));
      for (const modifier of modifiers.reverse()) await page.keyboard.up(modifier);
    }
  },
  type: ({ text }) => page.keyboard.type(text),
  screenshot: () => page.screenshot({ encoding: "base64" }),
  errors: () => {
    const taken = errors;
    errors = [];
    return taken;
  },
};

reply({ ready: true, version: await browser.version(), pid: browser.process()?.pid ?? null });

const closeAndExit = async () => {
  await browser.close().catch(() => {});
  process.exit(0);
};

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { id, verb, args } = JSON.parse(line);
  if (verb === "close") break;
  try {
    const value = await verbs[verb](args ?? {});
    reply({ id, ok: true, value: value ?? null });
  } catch (error) {
    reply({ id, ok: false, error: String(error?.message ?? error) });
  }
}
await closeAndExit();

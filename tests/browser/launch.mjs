// How the page checkers (check_pages.mjs, hostile_pages.mjs, render_same.mjs) start: the
// manifest named first on the command line, where the results go (second), and headless
// Chromium (the manifest's "chromium") started by puppeteer-core from the folder
// browser_suite.py installed it in (MIMEURI_BROWSER_NODE_MODULES), with the flags every
// checker needs and those it adds.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(process.env.MIMEURI_BROWSER_NODE_MODULES + '/');
const puppeteer = require('puppeteer-core');

// --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
const common = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--mute-audio'];

export async function start(args = []) {
  const [manifestPath, resultsPath] = process.argv.slice(2);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const browser = await puppeteer.launch({ executablePath: manifest.chromium, headless: true, args: [...common, ...args] });
  return { manifest, resultsPath, browser };
}

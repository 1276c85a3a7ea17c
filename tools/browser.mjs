// The headless-browser set-up shared by keyscene's browser checks (tools/view_check.mjs for
// `keyscene view`, tools/threejs_check.mjs for three.js's GLTFLoader): playwright-core and the
// other npm packages from $KEYSCENE_NODE_MODULES (default /opt/keyscene-oracles/node/node_modules),
// Chromium from $KEYSCENE_CHROMIUM (default /usr/bin/chromium), launched headless with
// SwiftShader's software WebGL (no GPU driver needed; the same pixels on every machine).
// A missing piece prints {"error": message} and exits with status 2, which the Rust tests read
// as "set-up missing" (their trials are then reported ignored before node is ever started).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

export const modules = process.env.KEYSCENE_NODE_MODULES || '/opt/keyscene-oracles/node/node_modules';
export const browserPath = process.env.KEYSCENE_CHROMIUM || '/usr/bin/chromium';
export const requireModule = createRequire(path.join(modules, 'noop.js'));

// Prints the set-up error as the scripts' JSON answer and exits with status 2.
export function setupError(msg) {
  console.log(JSON.stringify({ error: msg }));
  process.exit(2);
}

// Checks playwright-core, the browser and `usage` (one JOB.json argument), then reads the job.
// `packages`: more npm packages the script needs, as [name, file inside the package].
export function setup(usage, packages = []) {
  let chromium;
  try {
    ({ chromium } = requireModule('playwright-core'));
  } catch (e) {
    setupError(`cannot load playwright-core from ${modules}: ${e.message}`);
  }
  for (const [name, file] of packages) {
    if (!fs.existsSync(path.join(modules, name, file))) setupError(`no ${name} in ${modules}`);
  }
  if (!fs.existsSync(browserPath)) setupError(`no browser at ${browserPath}`);
  if (process.argv.length !== 3) setupError(`usage: ${usage}`);
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  return { chromium, job };
}

// Starts headless Chromium with software WebGL2.
export function launch(chromium) {
  return chromium.launch({
    executablePath: browserPath,
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-gpu'],
  });
}

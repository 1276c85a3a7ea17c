#!/usr/bin/env node
// Loads glTF/GLB files with three.js's GLTFLoader in headless Chromium (one browser session for
// all of them), plays each one's first animation to given times and reports world-space vertex
// positions as three computes them for rendering; saves one screenshot per file.
// The page is tools/threejs_page.html; crates/keyscene/tests/gltf_threejs.rs writes the job
// and compares the answers with the lib3ds / ufbx references.
//
// Usage:  node tools/threejs_check.mjs JOB.json
//   JOB.json: {"files": [{"name", "file": absolute path, "times": [seconds…],
//              "vertices": {"NAME\u0000INSTANCE": [source vertex index…]}, "all": bool (every
//              source vertex), "clip": animation name, "source_space": bool (positions in the
//              source's axes, under keyscene's axis root), "screenshot": absolute .png path}]}
// Prints one JSON document: {"three": "r187", "chromium": version, "files": [{"name",
//   "samples": [{"time", "nodes": [{"name", "instance", "vertex_count", "world_bbox_min",
//   "world_bbox_max", "world_centroid", "vertices": [[index, [x, y, z]]…]}]}]} or {"name",
//   "error"}]}.
// Packages `playwright-core` and `three` come from $KEYSCENE_NODE_MODULES (default
// /opt/keyscene-oracles/node/node_modules); the browser is $KEYSCENE_CHROMIUM (default
// /usr/bin/chromium); the set-up is tools/browser.mjs, shared with tools/view_check.mjs.
// Exit status: 0 = every file loaded, 1 = some failed, 2 = setup missing.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { modules, setup, launch } from './browser.mjs';

const { chromium, job } = setup('node tools/threejs_check.mjs JOB.json', [['three', 'build/three.module.js']]);
const threeDir = path.join(modules, 'three');
const page_html = path.join(path.dirname(fileURLToPath(import.meta.url)), 'threejs_page.html');

// Everything is served from one made-up origin through request interception (no server, no
// file:// module restrictions): /index.html, /three/… from the npm package, /files/N/name.
const origin = 'http://keyscene.invalid';
const types = { '.html': 'text/html', '.js': 'text/javascript', '.glb': 'model/gltf-binary',
  '.gltf': 'model/gltf+json', '.bin': 'application/octet-stream', '.png': 'image/png',
  '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg' };
const fileDirs = job.files.map((f) => path.dirname(path.resolve(f.file)));

function resolve(url) {
  const p = decodeURIComponent(new URL(url).pathname);
  if (p === '/index.html') return page_html;
  if (p.startsWith('/three/')) return path.join(threeDir, path.normalize(p.slice('/three/'.length)));
  const m = p.match(/^\/files\/(\d+)\/(.*)$/);
  if (m && fileDirs[+m[1]] !== undefined) return path.join(fileDirs[+m[1]], path.normalize(m[2]));
  return null;
}

const browser = await launch(chromium);
let status = 0;
const out = { three: null, chromium: browser.version(), files: [] };
try {
  const page = await browser.newPage({ viewport: { width: 640, height: 480 } });
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.route(`${origin}/**`, async (route) => {
    const file = resolve(route.request().url());
    if (!file || !fs.existsSync(file)) return route.fulfill({ status: 404, body: 'not found' });
    const type = types[path.extname(file).toLowerCase()] || 'application/octet-stream';
    return route.fulfill({ status: 200, contentType: type, body: fs.readFileSync(file) });
  });
  await page.goto(`${origin}/index.html`);
  await page.waitForFunction(() => window.keysceneReady === true, null, { timeout: 30000 })
    .catch(() => { throw new Error(`page did not start: ${consoleErrors.join('; ')}`); });
  for (const [i, f] of job.files.entries()) {
    const url = `${origin}/files/${i}/${encodeURIComponent(path.basename(f.file))}`;
    const started = performance.now();
    try {
      const r = await page.evaluate((j) => window.keysceneCheck(j), {
        url, times: f.times, vertices: f.vertices || {}, all: !!f.all, clip: f.clip ?? null,
        source_space: !!f.source_space,
      });
      out.three = r.three;
      if (f.screenshot) {
        fs.mkdirSync(path.dirname(f.screenshot), { recursive: true });
        await page.locator('canvas').screenshot({ path: f.screenshot });
      }
      out.files.push({ name: f.name, animations: r.animations, ms: Math.round(performance.now() - started), samples: r.samples });
    } catch (e) {
      status = 1;
      out.files.push({ name: f.name, error: String(e.message || e).split('\n')[0] });
    }
  }
} finally {
  await browser.close();
}
// No process.exit here: it would cut stdout to a pipe short of the whole document.
process.stdout.write(JSON.stringify(out) + '\n');
process.exitCode = status;

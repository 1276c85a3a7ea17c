// The browser half of crates/keyscene-cli/tests/view.rs (set-up: tools/browser.mjs): opens `keyscene view` pages
// in headless Chromium (playwright-core), waits for `window.keysceneReady`, and measures the
// canvas through the page's test hooks (`window.keyscene`): the share of non-background pixels
// at the first frame, the share of pixels that change when scrubbing to another frame, and the
// coverage after hiding every node. Screenshots go to each job's `shots` folder.
//
// Usage: node tools/view_check.mjs JOB.json, JOB = {"pages": [{"name", "url", "frame", "shots"}]}.
// Optional per page:
// - "overlays": [names]: each overlay is switched on alone at the first frame; "overlay_changed"
//   gives the share of pixels it changed.
// - "camera": {"node", "frame", "marks": [[node, vertex], ...]}: looks through camera node
//   `node` (or "auto": render's automatic camera, the page's "frame all") at `frame`, saves the canvas as SHOTS/NAME_camera.png (exact pixels, toDataURL),
//   and answers "canvas" [w, h], "camera_coverage" (share of non-background pixels) and "marks": where the page draws each vertex ({x, y} from the
//   top left, or null; window.keyscene.markVertex).
// - "replace": {"from", "to"}: at the end copies file `from` over `to` (the file a
//   `view --watch` serves) and waits until the page has reloaded by itself: "reloaded"
//   {"version", "nodes" (outliner rows), "coverage"} or an error.
// Prints one JSON document: {"chromium", "pages": [{"name", "error", "coverage", "changed",
// "hidden_coverage", "console", ...}]}. Exit status 0, or 2 when the setup is missing.
import fs from 'node:fs';
import path from 'node:path';
import { setup, launch } from './browser.mjs';

const { chromium, job } = setup('node tools/view_check.mjs JOB.json');
const browser = await launch(chromium);
const out = { chromium: browser.version(), pages: [] };
try {
  for (const p of job.pages) {
    const page = await browser.newPage({ viewport: { width: 900, height: 600 } });
    const consoleErrors = [];
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    const r = { name: p.name, console: consoleErrors };
    try {
      fs.mkdirSync(p.shots, { recursive: true });
      await page.goto(p.url);
      await page.waitForFunction(() => window.keysceneReady === true, null, { timeout: 120000 });
      r.error = await page.evaluate(() => window.keysceneError);
      if (!r.error) {
        const canvas = page.locator('#view');
        // The camera the page opened on (the scene's first camera, else "auto"); the checks
        // below look through the automatic camera, which frames the whole animation.
        r.opened_camera = await page.evaluate(() => window.keyscene.camera());
        await page.screenshot({ path: path.join(p.shots, `${p.name}_opened.png`) });
        await page.evaluate(() => window.keyscene.setCamera('auto'));
        r.coverage = await page.evaluate(() => window.keyscene.coverage());
        if (p.overlays) {
          r.overlay_changed = {};
          for (const o of p.overlays) {
            await page.evaluate(() => window.keyscene.snapshot());
            await page.evaluate((o) => window.keyscene.setOverlay(o, true), o);
            r.overlay_changed[o] = await page.evaluate(() => window.keyscene.changedSinceSnapshot());
            await page.screenshot({ path: path.join(p.shots, `${p.name}_overlay_${o}.png`) });
            await page.evaluate((o) => window.keyscene.setOverlay(o, false), o);
          }
        }
        await page.evaluate(() => window.keyscene.snapshot());
        await page.screenshot({ path: path.join(p.shots, `${p.name}_first.png`) });
        await page.evaluate((f) => window.keyscene.setFrame(f), p.frame);
        r.frame = await page.evaluate(() => window.keyscene.frame());
        r.changed = await page.evaluate(() => window.keyscene.changedSinceSnapshot());
        r.frame_coverage = await page.evaluate(() => window.keyscene.coverage());
        await page.screenshot({ path: path.join(p.shots, `${p.name}_frame.png`) });
        await canvas.screenshot({ path: path.join(p.shots, `${p.name}_canvas.png`) });
        if (p.camera) {
          if (p.camera.node === 'auto') await page.evaluate(() => window.keyscene.frameAll());
          else await page.evaluate((n) => window.keyscene.setCamera(n), p.camera.node);
          await page.evaluate((f) => window.keyscene.setFrame(f), p.camera.frame);
          r.canvas = await page.evaluate(() => window.keyscene.canvasSize());
          r.camera_coverage = await page.evaluate(() => window.keyscene.coverage());
          r.marks = [];
          for (const [node, v] of p.camera.marks || []) {
            r.marks.push(await page.evaluate(([n, v]) => window.keyscene.markVertex(n, v), [node, v]));
          }
          const url = await page.evaluate(() => document.getElementById('view').toDataURL('image/png'));
          fs.writeFileSync(path.join(p.shots, `${p.name}_camera.png`), Buffer.from(url.split(',')[1], 'base64'));
          await page.screenshot({ path: path.join(p.shots, `${p.name}_camera_page.png`) });
          await page.evaluate(() => window.keyscene.setCamera('auto'));
        }
        r.hidden_coverage = await page.evaluate(() => {
          const n = document.querySelectorAll('input[data-eye]').length;
          for (let i = 0; i < n; i++) window.keyscene.setHidden(i, true);
          return window.keyscene.coverage();
        });
        await page.screenshot({ path: path.join(p.shots, `${p.name}_hidden.png`) });
        if (p.replace) {
          const before = await page.evaluate(() => window.keysceneVersion);
          fs.copyFileSync(p.replace.from, p.replace.to);
          const deadline = Date.now() + 60000;
          for (;;) {
            // The page reloads itself: its context goes away in between, so ask again.
            const now = await page.evaluate(() => window.keysceneReady === true && window.keysceneVersion)
              .catch(() => null);
            if (now != null && now !== false && now !== before) {
              r.reloaded = {
                version: now,
                nodes: await page.evaluate(() => document.querySelectorAll('input[data-eye]').length),
                coverage: await page.evaluate(() => window.keyscene && window.keyscene.coverage()),
                error: await page.evaluate(() => window.keysceneError),
              };
              await page.screenshot({ path: path.join(p.shots, `${p.name}_reloaded.png`) });
              break;
            }
            if (Date.now() > deadline) { r.reloaded = { error: 'the page did not reload within 60 s' }; break; }
            await new Promise((res) => setTimeout(res, 200));
          }
        }
      }
    } catch (e) {
      r.error = String(e && e.message || e);
    }
    out.pages.push(r);
    await page.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));

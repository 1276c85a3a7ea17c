#!/usr/bin/env node
// Validates .gltf/.glb files with the Khronos glTF-Validator (npm package `gltf-validator`)
// and prints one line of JSON per file: {file, errors, warnings, infos, hints, codes}.
// `codes` counts issues per code with the first message of each.
//
// Usage:  node tools/validate_gltf.mjs FILE...
// The package is loaded from $KEYSCENE_NODE_MODULES (default
// /opt/keyscene-oracles/node/node_modules), the folder `npm install gltf-validator` made.
// Exit status: 0 = no errors in any file, 1 = errors, 2 = validator missing or a file
// unreadable. External resources (.bin, images) are read beside each file.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const modules = process.env.KEYSCENE_NODE_MODULES || '/opt/keyscene-oracles/node/node_modules';
const require = createRequire(path.join(modules, 'noop.js'));
let validator;
try {
  validator = require('gltf-validator');
} catch (e) {
  console.log(JSON.stringify({ error: `cannot load gltf-validator from ${modules}: ${e.message}` }));
  process.exit(2);
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node tools/validate_gltf.mjs FILE...');
  process.exit(2);
}
let status = 0;
for (const file of files) {
  const full = path.resolve(file);
  try {
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(full)), {
      uri: path.basename(full),
      maxIssues: 1000,
      externalResourceFunction: (uri) => new Promise((resolve, reject) => {
        fs.readFile(path.resolve(path.dirname(full), decodeURIComponent(uri)),
          (err, data) => (err ? reject(err.toString()) : resolve(new Uint8Array(data))));
      }),
    });
    const codes = {};
    for (const m of report.issues.messages) {
      const c = codes[m.code] || (codes[m.code] = { severity: m.severity, count: 0, first: `${m.pointer || ''} ${m.message}`.trim() });
      c.count++;
    }
    const i = report.issues;
    console.log(JSON.stringify({ file, errors: i.numErrors, warnings: i.numWarnings, infos: i.numInfos, hints: i.numHints, codes }));
    if (i.numErrors > 0 && status === 0) status = 1;
  } catch (e) {
    console.log(JSON.stringify({ file, error: String((e && e.message) || e) }));
    status = 2;
  }
}
process.exit(status);

#!/usr/bin/env node
// Validates .gltf/.glb files with the Khronos glTF-Validator (npm package `gltf-validator`)
// and prints one line of JSON per file: {file, errors, warnings, infos, hints, codes}.
// `codes` counts issues per code with the first message of each. A file that cannot be read
// or validated gets {file, error}.
//
// Usage:  node tools/validate_gltf.mjs FILE...
//         node tools/validate_gltf.mjs --stdin
// The package is loaded from $KEYSCENE_NODE_MODULES (default
// /opt/keyscene-oracles/node/node_modules), the folder `npm install gltf-validator` made.
// Exit status (FILE... mode): 0 = no errors in any file, 1 = errors, 2 = validator missing or
// a file unreadable. External resources (.bin, images) are read beside each file.
//
// --stdin keeps one process alive for many requests (tests/gltf_validator.rs runs a pool of
// them, so each trial pays only the validation, not node's start-up): each input line is one
// request, the file paths separated by tabs (or a JSON array of paths); the answer is one JSON
// line per file as above, then the line {"done":N} (N = files answered). Requests are answered
// in order. The process exits 0 at the end of input; when the package cannot be loaded it prints
// {error} and exits 2 before reading anything. A reader must treat end of output before
// {"done":…} as a failure (a crash, e.g. a stack overflow on a deep node tree).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
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

/// Validates one file; returns [JSON line, status] with status 0 = no errors, 1 = errors,
/// 2 = unreadable or the validator threw.
async function validateFile(file) {
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
    const line = JSON.stringify({ file, errors: i.numErrors, warnings: i.numWarnings, infos: i.numInfos, hints: i.numHints, codes });
    return [line, i.numErrors > 0 ? 1 : 0];
  } catch (e) {
    return [JSON.stringify({ file, error: String((e && e.message) || e) }), 2];
  }
}

/// One request line → its file paths: a JSON array, or tab-separated paths.
function requestFiles(line) {
  if (line.trimStart().startsWith('[')) {
    const v = JSON.parse(line);
    if (!Array.isArray(v) || !v.every((f) => typeof f === 'string')) {
      throw new Error('a JSON request must be an array of path strings');
    }
    return v;
  }
  return line.split('\t').filter((f) => f.length > 0);
}

const args = process.argv.slice(2);
if (args.length === 1 && args[0] === '--stdin') {
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of input) {
    if (line.trim() === '') continue;
    let files;
    try {
      files = requestFiles(line);
    } catch (e) {
      process.stdout.write(`${JSON.stringify({ error: `bad request: ${e.message}` })}\n{"done":0}\n`);
      continue;
    }
    let out = '';
    for (const file of files) out += `${(await validateFile(file))[0]}\n`;
    process.stdout.write(`${out}{"done":${files.length}}\n`);
  }
  process.exit(0);
}
if (args.length === 0) {
  console.error('usage: node tools/validate_gltf.mjs FILE...   (or --stdin: one request per line)');
  process.exit(2);
}
let status = 0;
for (const file of args) {
  const [line, s] = await validateFile(file);
  console.log(line);
  if (s === 2) status = 2;
  else if (s === 1 && status === 0) status = 1;
}
process.exit(status);

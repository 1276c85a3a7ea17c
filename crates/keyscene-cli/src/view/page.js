// keyscene view: the page. WebGL2, no third-party code. Every pose comes from the server's
// /pose (the library's Scene::evaluate); the page never interpolates. Shading follows
// keyscene::render (docs/render.md): one light at the camera, Lambert + Blinn-Phong, diffuse
// colour or texture, the checker default material. Data shapes: docs/view.md.
"use strict";

window.keysceneReady = false;
window.keysceneError = null;

const BACKGROUND = [0x33 / 255, 0x33 / 255, 0x33 / 255];
const $ = (id) => document.getElementById(id);

// ---- small vector / matrix helpers (column-major 4×4, as the server sends them) ----
const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
const scale = (a, s) => [a[0] * s, a[1] * s, a[2] * s];
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const norm = (a) => { const l = Math.hypot(a[0], a[1], a[2]); return l > 0 ? scale(a, 1 / l) : null; };

function lookTo(eye, forward, up) {
  const f = norm(forward);
  let r = norm(cross(f, up)) || norm(cross(f, [1, 0, 0]));
  const u = cross(r, f);
  return [r[0], u[0], -f[0], 0, r[1], u[1], -f[1], 0, r[2], u[2], -f[2], 0,
    -dot(r, eye), -dot(u, eye), dot(f, eye), 1];
}

function projection(tx, ty, near, far) {
  return [1 / tx, 0, 0, 0, 0, 1 / ty, 0, 0, 0, 0, -(far + near) / (far - near), -1,
    0, 0, -2 * far * near / (far - near), 0];
}

// Orthographic projection of half width hx and half height hy (glTF 2.0 §3.10.3's matrix).
function orthoProjection(hx, hy, near, far) {
  return [1 / hx, 0, 0, 0, 0, 1 / hy, 0, 0, 0, 0, 2 / (near - far), 0,
    0, 0, (far + near) / (near - far), 1];
}

// Inverse transpose of the upper 3×3 of a column-major 4×4 (identity when singular).
function normalMatrix(m) {
  const a = m[0], b = m[1], c = m[2], d = m[4], e = m[5], f = m[6], g = m[8], h = m[9], i = m[10];
  const A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
  const det = a * A + b * B + c * C;
  if (!isFinite(det) || Math.abs(det) < 1e-300) return [1, 0, 0, 0, 1, 0, 0, 0, 1];
  const s = 1 / det;
  // Cofactor matrix / det = inverse transpose; column-major.
  return [A * s, B * s, C * s,
    -(b * i - c * h) * s, (a * i - c * g) * s, -(a * h - b * g) * s,
    (b * f - c * e) * s, -(a * f - c * d) * s, (a * e - b * d) * s];
}

// ---- state ----
const state = {
  scene: null, meshes: [], textures: [], pose: null, frame: 0, animation: null,
  playing: false, userHidden: [], selected: null, camera: "auto",
  orbit: { target: [0, 0, 0], dist: 10, az: 0, el: 0, radius: 1 },
  deformedGpu: new Map(),
  overlays: { bbox: false, bsphere: false, wireframe: false, axes: false, joints: false },
  version: null,
};

// ---- WebGL ----
const canvas = $("view");
const gl = canvas.getContext("webgl2", { antialias: false, preserveDrawingBuffer: true });

const VS = `#version 300 es
layout(location = 0) in vec3 aPos;
layout(location = 1) in vec3 aNormal;
layout(location = 2) in vec2 aUv;
uniform mat4 uModel, uView, uProj;
uniform mat3 uNormal;
out vec3 vPos; out vec3 vNormal; out vec2 vUv;
void main() {
  vec4 p = uView * uModel * vec4(aPos, 1.0);
  vPos = p.xyz;
  vNormal = mat3(uView) * (uNormal * aNormal);
  vUv = aUv;
  gl_Position = uProj * p;
}`;
const FS = `#version 300 es
precision highp float;
in vec3 vPos; in vec3 vNormal; in vec2 vUv;
uniform vec3 uColor, uSpecular;
uniform float uAlpha, uStrength, uSelf, uAmbient, uExponent;
uniform int uMode; // 0 colour, 1 texture, 2 checker
uniform sampler2D uTex;
uniform vec3 uHighlight;
out vec4 outColor;
void main() {
  vec3 n = vNormal;
  float len = length(n);
  n = len > 0.0 ? n / len : vec3(0.0, 0.0, 1.0);
  if (!gl_FrontFacing) n = -n;
  vec3 l = normalize(-vPos);
  float ndl = max(dot(n, l), 0.0);
  vec3 base = uColor;
  if (uMode == 2) {
    float c = mod(floor(vUv.x * 8.0) + floor(vUv.y * 8.0), 2.0);
    base = c < 0.5 ? vec3(0.85, 0.85, 0.85) : vec3(0.85, 0.2, 0.75);
  } else if (uMode == 1) {
    vec3 t = texture(uTex, vUv).rgb;
    base = t * uStrength + uColor * (1.0 - uStrength);
  }
  float lit = max(uAmbient + (1.0 - uAmbient) * ndl, uSelf);
  float spec = pow(ndl, uExponent);
  vec3 c = base * lit + uSpecular * spec;
  outColor = vec4(mix(c, uHighlight, uHighlight == vec3(0.0) ? 0.0 : 0.35), uAlpha);
}`;

function compile(type, src) {
  const s = gl.createShader(type);
  gl.shaderSource(s, src);
  gl.compileShader(s);
  if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
  return s;
}

let prog, loc;
function initGl() {
  if (!gl) throw new Error("this browser has no WebGL2");
  prog = gl.createProgram();
  gl.attachShader(prog, compile(gl.VERTEX_SHADER, VS));
  gl.attachShader(prog, compile(gl.FRAGMENT_SHADER, FS));
  gl.linkProgram(prog);
  if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(prog));
  loc = {};
  for (const u of ["uModel", "uView", "uProj", "uNormal", "uColor", "uSpecular", "uAlpha",
    "uStrength", "uSelf", "uAmbient", "uExponent", "uMode", "uTex", "uHighlight"]) {
    loc[u] = gl.getUniformLocation(prog, u);
  }
}

// Overlays (bounding box and sphere, wireframe, axes, joints) and the test marker: lines and
// points in one colour each, through the same view and projection as the shaded meshes.
const LINE_VS = `#version 300 es
layout(location = 0) in vec3 aPos;
uniform mat4 uModel, uView, uProj;
uniform float uPointSize;
void main() { gl_Position = uProj * uView * uModel * vec4(aPos, 1.0); gl_PointSize = uPointSize; }`;
const LINE_FS = `#version 300 es
precision highp float;
uniform vec3 uColor;
out vec4 outColor;
void main() { outColor = vec4(uColor, 1.0); }`;
let lineProg, lineLoc, lineVao, lineBuf;
function initLines() {
  lineProg = gl.createProgram();
  gl.attachShader(lineProg, compile(gl.VERTEX_SHADER, LINE_VS));
  gl.attachShader(lineProg, compile(gl.FRAGMENT_SHADER, LINE_FS));
  gl.linkProgram(lineProg);
  if (!gl.getProgramParameter(lineProg, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(lineProg));
  lineLoc = {};
  for (const u of ["uModel", "uView", "uProj", "uColor", "uPointSize"]) lineLoc[u] = gl.getUniformLocation(lineProg, u);
  lineVao = gl.createVertexArray();
  gl.bindVertexArray(lineVao);
  lineBuf = buffer(new Float32Array(3), 0, 3, gl.DYNAMIC_DRAW);
  gl.bindVertexArray(null);
}

// Draws `points` (flat x y z list) as `mode` (gl.LINES or gl.POINTS) in `color`.
function drawLines(points, color, mode, model, view, proj, pointSize) {
  if (!points.length) return;
  gl.useProgram(lineProg);
  gl.bindVertexArray(lineVao);
  gl.bindBuffer(gl.ARRAY_BUFFER, lineBuf);
  gl.bufferData(gl.ARRAY_BUFFER, points instanceof Float32Array ? points : new Float32Array(points), gl.DYNAMIC_DRAW);
  gl.uniformMatrix4fv(lineLoc.uModel, false, model || IDENTITY4);
  gl.uniformMatrix4fv(lineLoc.uView, false, view);
  gl.uniformMatrix4fv(lineLoc.uProj, false, proj);
  gl.uniform3fv(lineLoc.uColor, color);
  gl.uniform1f(lineLoc.uPointSize, pointSize || 1);
  gl.drawArrays(mode, 0, points.length / 3);
  gl.bindVertexArray(null);
}

// A mesh's triangle edges as line segments in mesh space (built once per mesh).
function meshEdges(mesh) {
  if (mesh.edges) return mesh.edges;
  const seen = new Set(), out = [];
  for (let t = 0; t + 2 < mesh.T; t += 3) {
    for (let k = 0; k < 3; k++) {
      const a = mesh.cornerVertex[mesh.triCorner[t + k]], b = mesh.cornerVertex[mesh.triCorner[t + (k + 1) % 3]];
      const key = a < b ? a * 4294967296 + b : b * 4294967296 + a;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(a, b);
    }
  }
  mesh.edges = Uint32Array.from(out);
  return mesh.edges;
}

// The edge segments of `mesh` with positions `pos` (flat, x y z per vertex).
function edgeSegments(mesh, pos) {
  const e = meshEdges(mesh), out = new Float32Array(e.length * 3);
  for (let i = 0; i < e.length; i++) {
    out[i * 3] = pos[e[i] * 3]; out[i * 3 + 1] = pos[e[i] * 3 + 1]; out[i * 3 + 2] = pos[e[i] * 3 + 2];
  }
  return out;
}

function buffer(data, attrib, size, usage) {
  const b = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, b);
  gl.bufferData(gl.ARRAY_BUFFER, data, usage || gl.STATIC_DRAW);
  gl.enableVertexAttribArray(attrib);
  gl.vertexAttribPointer(attrib, size, gl.FLOAT, false, 0, 0);
  return b;
}

// /mesh/N: see docs/view.md for the layout.
function parseMesh(buf) {
  const dv = new DataView(buf);
  const magic = String.fromCharCode(dv.getUint8(0), dv.getUint8(1), dv.getUint8(2), dv.getUint8(3));
  if (magic !== "KSM1") throw new Error("mesh buffer: bad magic " + magic);
  const [V, C, T, G] = [4, 8, 12, 16].map((o) => dv.getUint32(o, true));
  let o = 20;
  const take = (Type, n) => { const a = new Type(buf, o, n); o += n * 4; return a; };
  const positions = take(Float32Array, V * 3), normals = take(Float32Array, C * 3);
  const uvs = take(Float32Array, C * 2), cornerVertex = take(Uint32Array, C);
  const triCorner = take(Uint32Array, T);
  const groups = [];
  for (let g = 0; g < G; g++) {
    groups.push({ first: dv.getUint32(o, true), count: dv.getUint32(o + 4, true), material: dv.getInt32(o + 8, true) });
    o += 12;
  }
  const pos = new Float32Array(T * 3), nrm = new Float32Array(T * 3), uv = new Float32Array(T * 2);
  for (let i = 0; i < T; i++) {
    const c = triCorner[i], v = cornerVertex[c];
    pos.set(positions.subarray(v * 3, v * 3 + 3), i * 3);
    nrm.set(normals.subarray(c * 3, c * 3 + 3), i * 3);
    uv.set(uvs.subarray(c * 2, c * 2 + 2), i * 2);
  }
  const vao = gl.createVertexArray();
  gl.bindVertexArray(vao);
  buffer(pos, 0, 3); buffer(nrm, 1, 3);
  const uvBuf = buffer(uv, 2, 2);
  gl.bindVertexArray(null);
  return { vao, uvBuf, groups, triCorner, cornerVertex, positions, T, V, edges: null };
}

// A node whose mesh the pose deforms: its own world-space position and normal buffers.
function deformedVao(node, meshIndex, d) {
  const mesh = state.meshes[meshIndex];
  let e = state.deformedGpu.get(node);
  if (!e || e.mesh !== meshIndex) {
    const vao = gl.createVertexArray();
    gl.bindVertexArray(vao);
    const pb = buffer(new Float32Array(mesh.T * 3), 0, 3, gl.DYNAMIC_DRAW);
    const nb = buffer(new Float32Array(mesh.T * 3), 1, 3, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, mesh.uvBuf);
    gl.enableVertexAttribArray(2);
    gl.vertexAttribPointer(2, 2, gl.FLOAT, false, 0, 0);
    gl.bindVertexArray(null);
    e = { vao, pb, nb, mesh: meshIndex };
    state.deformedGpu.set(node, e);
  }
  const pos = new Float32Array(mesh.T * 3), nrm = new Float32Array(mesh.T * 3);
  for (let i = 0; i < mesh.T; i++) {
    const c = mesh.triCorner[i], v = mesh.cornerVertex[c];
    for (let k = 0; k < 3; k++) {
      pos[i * 3 + k] = d.positions[v * 3 + k] ?? NaN;
      nrm[i * 3 + k] = d.normals[c * 3 + k] ?? 0;
    }
  }
  gl.bindBuffer(gl.ARRAY_BUFFER, e.pb); gl.bufferData(gl.ARRAY_BUFFER, pos, gl.DYNAMIC_DRAW);
  gl.bindBuffer(gl.ARRAY_BUFFER, e.nb); gl.bufferData(gl.ARRAY_BUFFER, nrm, gl.DYNAMIC_DRAW);
  return e.vao;
}

function loadTexture(url) {
  return new Promise((resolve) => {
    const img = new Image();
    img.onload = () => {
      const t = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, t);
      gl.pixelStorei(gl.UNPACK_FLIP_Y_WEBGL, true); // v = 0 is the image's bottom row
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGB, gl.RGB, gl.UNSIGNED_BYTE, img);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.REPEAT);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.REPEAT);
      resolve(t);
    };
    img.onerror = () => resolve(null);
    img.src = url;
  });
}

// ---- the view: orbit camera or a scene camera ----
function aspect() { return canvas.width / Math.max(1, canvas.height); }

function orbitEye() {
  const s = state.scene.axes, o = state.orbit;
  const dir = add(scale(add(scale(s.front, Math.cos(o.az)), scale(s.right, Math.sin(o.az))), Math.cos(o.el)),
    scale(s.up, Math.sin(o.el)));
  return { eye: add(o.target, scale(dir, o.dist)), dir };
}

function currentView() {
  const pose = state.pose;
  if (state.camera !== "auto" && pose) {
    const cv = pose.camera_views.find((c) => c.node === Number(state.camera));
    if (cv) {
      const t = Math.tan(Math.min(Math.max(cv.fov_degrees, 0.01), 179) * Math.PI / 360);
      const [tx, ty] = cv.fov_axis === "horizontal" ? [t, t / aspect()] : [t * aspect(), t];
      const b = pose.bounds;
      const diag = b ? Math.hypot(...sub(b[1], b[0])) : 1;
      const near = diag > 0 && isFinite(diag) ? diag * 1e-4 : 1e-4;
      const w = cv.world_to_camera;
      const eye = [-(w[0] * w[12] + w[1] * w[13] + w[2] * w[14]), -(w[4] * w[12] + w[5] * w[13] + w[6] * w[14]),
        -(w[8] * w[12] + w[9] * w[13] + w[10] * w[14])];
      const centre = b ? scale(add(b[0], b[1]), 0.5) : [0, 0, 0];
      const far = Math.max(near * 10, (Math.hypot(...sub(centre, eye)) + diag) * 2);
      if (cv.orthographic) {
        const [xm, ym] = cv.orthographic;
        const [hx, hy] = cv.fov_axis === "horizontal" ? [xm, xm / aspect()] : [ym * aspect(), ym];
        return { view: w, proj: orthoProjection(hx, hy, near, far), tx: hx, ty: hy };
      }
      return { view: w, proj: projection(tx, ty, near, far), tx, ty };
    }
  }
  const ty = Math.tan(state.scene.auto_camera.fov_y_degrees * Math.PI / 360), tx = ty * aspect();
  const { eye, dir } = orbitEye();
  const o = state.orbit;
  const view = lookTo(eye, scale(dir, -1), state.scene.axes.up);
  const near = Math.max((o.dist - o.radius) * 0.5, o.dist * 1e-4);
  const far = o.dist + o.radius * 4;
  return { view, proj: projection(tx, ty, near, far), tx, ty };
}

// Render's automatic camera: frames the sphere (× margin) of the box round the whole animation
// range (`auto_camera.range_bounds`, render's `range_bounds`) at the scene's azimuth and
// elevation.
function frameAll() {
  const ac = state.scene.auto_camera;
  const b = ac.range_bounds || (state.pose && state.pose.bounds);
  let centre = [0, 0, 0], radius = 1;
  if (b) { centre = scale(add(b[0], b[1]), 0.5); radius = Math.hypot(...sub(b[1], b[0])) * 0.5; }
  if (!(radius > 0) || !isFinite(radius)) radius = 1;
  radius *= ac.margin;
  const ty = Math.tan(ac.fov_y_degrees * Math.PI / 360), t = Math.min(ty, ty * aspect());
  Object.assign(state.orbit, {
    target: centre, radius, dist: radius * Math.sqrt(1 + t * t) / t,
    az: ac.azimuth_degrees * Math.PI / 180, el: ac.elevation_degrees * Math.PI / 180,
  });
  state.camera = "auto";
  $("camera").value = "auto";
  draw();
}

// ---- drawing ----
const IDENTITY4 = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
const IDENTITY3 = [1, 0, 0, 0, 1, 0, 0, 0, 1];

function resize() {
  const w = Math.max(1, Math.round(canvas.clientWidth)), h = Math.max(1, Math.round(canvas.clientHeight));
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
}

function draw() {
  if (!state.scene || !state.pose) return;
  resize();
  gl.viewport(0, 0, canvas.width, canvas.height);
  gl.clearColor(BACKGROUND[0], BACKGROUND[1], BACKGROUND[2], 1);
  gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  gl.enable(gl.DEPTH_TEST);
  gl.useProgram(prog);
  const { view, proj } = currentView();
  gl.uniformMatrix4fv(loc.uView, false, view);
  gl.uniformMatrix4fv(loc.uProj, false, proj);
  gl.uniform1f(loc.uAmbient, state.scene.ambient);
  gl.uniform1i(loc.uTex, 0);
  const pose = state.pose, scene = state.scene;
  const deformed = new Map(pose.deformed.map((d) => [d.node, d]));
  const items = [];
  for (let n = 0; n < scene.nodes.length; n++) {
    const m = pose.mesh[n];
    if (m == null || pose.hidden[n] || state.userHidden[n] || !state.meshes[m]) continue;
    const mesh = state.meshes[m];
    const d = deformed.get(n);
    let vao = mesh.vao, model = pose.mesh_to_world[n] || IDENTITY4, nm = normalMatrix(model);
    if (scene.meshes[m].deformed) {
      if (!d) continue;
      vao = deformedVao(n, m, d); model = IDENTITY4; nm = IDENTITY3;
    }
    for (const g of mesh.groups) {
      const mat = g.material >= 0 ? scene.materials[g.material] : scene.default_material;
      items.push({ n, vao, model, nm, g, mat });
    }
  }
  const pass = (transparent) => {
    for (const it of items) {
      const mat = it.mat;
      if ((mat.alpha < 1) !== transparent) continue;
      gl.bindVertexArray(it.vao);
      gl.uniformMatrix4fv(loc.uModel, false, it.model);
      gl.uniformMatrix3fv(loc.uNormal, false, it.nm);
      gl.uniform3fv(loc.uColor, mat.color);
      gl.uniform3fv(loc.uSpecular, mat.specular);
      gl.uniform1f(loc.uAlpha, mat.alpha);
      gl.uniform1f(loc.uStrength, mat.strength);
      gl.uniform1f(loc.uSelf, mat.self_illumination);
      gl.uniform1f(loc.uExponent, mat.exponent);
      gl.uniform3fv(loc.uHighlight, it.n === state.selected ? [1, 0.6, 0.1] : [0, 0, 0]);
      const tex = it.g.material >= 0 ? state.textures[it.g.material] : null;
      gl.uniform1i(loc.uMode, mat.checker ? 2 : tex ? 1 : 0);
      if (tex) { gl.activeTexture(gl.TEXTURE0); gl.bindTexture(gl.TEXTURE_2D, tex); }
      if (mat.two_sided) gl.disable(gl.CULL_FACE); else gl.enable(gl.CULL_FACE);
      gl.drawArrays(gl.TRIANGLES, it.g.first, it.g.count);
    }
  };
  const ov = state.overlays;
  if (ov.wireframe) {
    // render --wireframe: outlines in the surface's colour, no fill (here: triangle edges).
    gl.disable(gl.DEPTH_TEST);
    for (const [n, mesh, d, model] of drawnMeshes(deformed)) {
      const pos = d ? d.positions : mesh.positions;
      const col = it0(items, n);
      drawLines(edgeSegments(mesh, pos), col, gl.LINES, d ? IDENTITY4 : model, view, proj);
    }
    gl.enable(gl.DEPTH_TEST);
  } else {
    gl.disable(gl.BLEND); gl.depthMask(true);
    pass(false);
    gl.enable(gl.BLEND); gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA); gl.depthMask(false);
    pass(true);
    gl.depthMask(true); gl.disable(gl.BLEND);
  }
  gl.bindVertexArray(null);
  drawOverlays(deformed, view, proj);
}

// The first surface colour a node is drawn with (for its wireframe).
function it0(items, n) {
  const it = items.find((i) => i.n === n);
  return it ? it.mat.color : [0.8, 0.8, 0.8];
}

// [node, mesh, deformed entry or undefined, mesh_to_world] for every node drawn.
function drawnMeshes(deformed) {
  const pose = state.pose, out = [];
  for (let n = 0; n < state.scene.nodes.length; n++) {
    const m = pose.mesh[n];
    if (m == null || pose.hidden[n] || state.userHidden[n] || !state.meshes[m]) continue;
    const d = state.scene.meshes[m].deformed ? deformed.get(n) : undefined;
    if (state.scene.meshes[m].deformed && !d) continue;
    out.push([n, state.meshes[m], d, pose.mesh_to_world[n] || IDENTITY4]);
  }
  return out;
}

const transformPoint = (m, p) => [0, 1, 2].map((r) => m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r]);

// Bounding box and sphere (render --bbox / --bsphere: the pose's box round the visible
// geometry; the sphere centred on the box, its radius the farthest visible vertex), axes at
// the origin, skeleton joints. Drawn on top, without depth test, as render draws them.
function drawOverlays(deformed, view, proj) {
  const ov = state.overlays, b = state.pose.bounds, colors = state.scene.overlay_colors;
  gl.disable(gl.DEPTH_TEST);
  if (b && ov.bbox) {
    const c = (i) => [i & 1 ? b[1][0] : b[0][0], i & 2 ? b[1][1] : b[0][1], i & 4 ? b[1][2] : b[0][2]];
    const pts = [];
    for (let i = 0; i < 8; i++) for (const bit of [1, 2, 4]) if (!(i & bit)) pts.push(...c(i), ...c(i | bit));
    drawLines(pts, colors.bbox, gl.LINES, null, view, proj);
  }
  if (b && ov.bsphere) {
    const centre = scale(add(b[0], b[1]), 0.5);
    let r = 0;
    for (const [, mesh, d, model] of drawnMeshes(deformed)) {
      const pos = d ? d.positions : mesh.positions;
      for (let v = 0; v < mesh.V; v++) {
        let p = [pos[v * 3], pos[v * 3 + 1], pos[v * 3 + 2]];
        if (!d) p = transformPoint(model, p);
        const dist = Math.hypot(...sub(p, centre));
        if (isFinite(dist) && dist > r) r = dist;
      }
    }
    const pts = [], S = 72, planes = [[[1, 0, 0], [0, 1, 0]], [[0, 1, 0], [0, 0, 1]], [[0, 0, 1], [1, 0, 0]]];
    for (const [u, w] of planes) {
      for (let k = 0; k < S; k++) {
        for (const j of [k, k + 1]) {
          const t = j / S * 2 * Math.PI;
          pts.push(...add(centre, scale(add(scale(u, Math.cos(t)), scale(w, Math.sin(t))), r)));
        }
      }
    }
    drawLines(pts, colors.bsphere, gl.LINES, null, view, proj);
  }
  if (ov.axes) {
    const len = b ? Math.hypot(...sub(b[1], b[0])) * 0.25 || 1 : 1;
    for (const [k, col] of [[0, [1, 0.2, 0.2]], [1, [0.2, 1, 0.2]], [2, [0.3, 0.5, 1]]]) {
      const e = [0, 0, 0]; e[k] = len;
      drawLines([0, 0, 0, ...e], col, gl.LINES, null, view, proj);
    }
  }
  if (ov.joints) {
    const w = state.pose.world, nodes = state.scene.nodes, pts = [], bones = [];
    const at = (n) => [w[n][12], w[n][13], w[n][14]];
    for (let n = 0; n < nodes.length; n++) {
      if (nodes[n].kind !== "bone") continue;
      bones.push(...at(n));
      const p = nodes[n].parent;
      if (p != null && nodes[p].kind === "bone") pts.push(...at(p), ...at(n));
    }
    drawLines(pts, [1, 1, 1], gl.LINES, null, view, proj);
    drawLines(bones, [1, 0.4, 0.1], gl.POINTS, null, view, proj, 6);
  }
  gl.enable(gl.DEPTH_TEST);
}

// ---- poses from the server ----
let inFlight = null, wanted = null;
function animationParam() { return state.animation == null ? "none" : String(state.animation); }

// Asks for the pose at `frame`; resolves once it is drawn. Only one request is in flight:
// the latest wanted frame is asked for next.
function setFrame(frame) {
  wanted = frame;
  if (inFlight) return inFlight.then(() => (wanted === null ? undefined : setFrame(wanted)));
  wanted = null;
  inFlight = fetch(`/pose?animation=${animationParam()}&frame=${frame}`)
    .then((r) => (r.ok ? r.json() : r.text().then((t) => { throw new Error(t); })))
    .then((p) => { state.pose = p; state.frame = p.frame; updateTimeline(); draw(); updateSelected(); })
    .finally(() => { inFlight = null; });
  return inFlight.then(() => (wanted === null ? undefined : setFrame(wanted)));
}

function range() {
  const a = state.animation == null ? null : state.scene.animations[state.animation];
  return a ? a.frame_range : [0, 0];
}
function fps() {
  const a = state.animation == null ? null : state.scene.animations[state.animation];
  return a && a.fps > 0 ? a.fps : state.scene.frame_rate;
}

function updateTimeline() {
  const [a, b] = range();
  const s = $("scrub");
  s.min = a; s.max = b; s.value = state.frame;
  $("readout").textContent = `frame ${fmt(state.frame)} / ${fmt(b)}  ·  ${fmt(state.frame / fps())} s`;
}
const fmt = (x) => (Math.round(x * 1000) / 1000).toString();

let last = null;
function tick(now) {
  if (state.playing && !inFlight) {
    const [a, b] = range();
    const dt = last == null ? 0 : (now - last) / 1000;
    let f = state.frame + dt * fps() * Number($("speed").value);
    if (f > b) { if ($("loop").checked && b > a) f = a + ((f - a) % (b - a)); else { f = b; setPlaying(false); } }
    setFrame(f);
  }
  last = now;
  requestAnimationFrame(tick);
}
function setPlaying(p) { state.playing = p; $("play").textContent = p ? "❚❚" : "▶"; }
function step(d) { setPlaying(false); const [a, b] = range(); setFrame(Math.min(b, Math.max(a, Math.round(state.frame) + d))); }

// ---- panels ----
function buildOutliner() {
  const scene = state.scene, tree = $("tree");
  const make = (n) => {
    const node = scene.nodes[n], div = document.createElement("div");
    div.className = "node"; div.dataset.node = n;
    const label = document.createElement("span"); label.className = "label";
    const eye = document.createElement("input"); eye.type = "checkbox"; eye.checked = true;
    eye.title = "show / hide"; eye.dataset.eye = n;
    eye.addEventListener("click", (e) => { e.stopPropagation(); state.userHidden[n] = !eye.checked; draw(); });
    label.append(eye, document.createTextNode((node.name || "(unnamed)") + (node.instance ? "." + node.instance : "") + " "));
    const kind = document.createElement("span"); kind.className = "kind"; kind.textContent = node.kind;
    label.append(kind);
    label.addEventListener("click", () => { select(n); });
    div.append(label);
    if (node.children.length) {
      const ch = document.createElement("div"); ch.className = "children";
      for (const c of node.children) ch.append(make(c));
      div.append(ch);
    }
    return div;
  };
  for (const r of scene.roots) tree.append(make(r));
}

function select(n) {
  state.selected = state.selected === n ? null : n;
  for (const el of document.querySelectorAll(".node")) el.classList.toggle("selected", Number(el.dataset.node) === state.selected);
  updateSelected(); draw();
}

function updateSelected() {
  const n = state.selected;
  if (n == null || !state.pose) { $("selected").textContent = "(click a node)"; return; }
  const node = state.scene.nodes[n], w = state.pose.world[n];
  const row = (r) => [0, 1, 2, 3].map((c) => fmt(w[c * 4 + r]).padStart(10)).join(" ");
  $("selected").textContent = `${node.name} (${node.kind})\nworld matrix:\n${[0, 1, 2, 3].map(row).join("\n")}` +
    `\nhidden: ${state.pose.hidden[n]}` + (state.pose.mesh[n] != null ? `\nmesh: ${state.pose.mesh[n]}` : "");
}

function buildPanels() {
  const s = state.scene;
  $("summary").textContent = `${s.file}\n${s.format}: ${s.nodes.length} nodes, ${s.meshes.length} meshes, ` +
    `${s.materials.length} materials, ${s.cameras.length} cameras, ${s.lights.length} lights, ${s.animations.length} animations`;
  const ul = $("warnings");
  if (!s.warnings.length) ul.innerHTML = "<li style='color:#8c8'>none</li>";
  for (const w of s.warnings) { const li = document.createElement("li"); li.textContent = w; ul.append(li); }
  const anim = $("animation");
  s.animations.forEach((a, i) => anim.add(new Option(`${i}: ${a.name || "(unnamed)"} [${a.frame_range[0]}…${a.frame_range[1]}]`, i)));
  anim.add(new Option("rest pose", "none"));
  anim.value = state.animation == null ? "none" : String(state.animation);
  anim.addEventListener("change", () => {
    state.animation = anim.value === "none" ? null : Number(anim.value);
    setFrame(range()[0]);
  });
  const cam = $("camera");
  cam.add(new Option("orbit camera", "auto"));
  s.nodes.forEach((n, i) => { if (n.kind === "camera") cam.add(new Option("camera " + n.name, i)); });
  cam.addEventListener("change", () => { state.camera = cam.value; draw(); });
  $("play").addEventListener("click", () => setPlaying(!state.playing));
  $("prev").addEventListener("click", () => step(-1));
  $("next").addEventListener("click", () => step(1));
  $("scrub").addEventListener("input", () => { setPlaying(false); setFrame(Number($("scrub").value)); });
  $("frameall").addEventListener("click", frameAll);
  for (const box of document.querySelectorAll("input[data-overlay]")) {
    box.checked = state.overlays[box.dataset.overlay];
    box.addEventListener("change", () => { state.overlays[box.dataset.overlay] = box.checked; draw(); });
  }
  window.addEventListener("keydown", (e) => {
    if (e.target.tagName === "SELECT") return;
    if (e.key === "ArrowLeft") { step(-1); e.preventDefault(); }
    else if (e.key === "ArrowRight") { step(1); e.preventDefault(); }
    else if (e.key === " ") { setPlaying(!state.playing); e.preventDefault(); }
    else if (e.key === "f") frameAll();
  });
}

// ---- mouse and touch: orbit (left / one finger), pan (right, shift or two fingers), zoom
// (wheel / pinch) ----
function controls() {
  let drag = null;
  const touches = new Map(); // pointerId -> [x, y] of the fingers down
  let pinch = null;
  const pinchState = () => {
    const [a, b] = [...touches.values()];
    return { d: Math.hypot(a[0] - b[0], a[1] - b[1]), x: (a[0] + b[0]) / 2, y: (a[1] + b[1]) / 2 };
  };
  canvas.addEventListener("contextmenu", (e) => e.preventDefault());
  canvas.addEventListener("pointerdown", (e) => {
    canvas.setPointerCapture(e.pointerId);
    if (e.pointerType === "touch") {
      touches.set(e.pointerId, [e.clientX, e.clientY]);
      if (touches.size === 2) { drag = null; pinch = pinchState(); return; }
    }
    drag = { x: e.clientX, y: e.clientY, pan: e.button === 2 || e.shiftKey };
  });
  const up = (e) => { drag = null; touches.delete(e.pointerId); if (touches.size < 2) pinch = null; };
  canvas.addEventListener("pointerup", up);
  canvas.addEventListener("pointercancel", up);
  canvas.addEventListener("pointermove", (e) => {
    if (touches.has(e.pointerId)) touches.set(e.pointerId, [e.clientX, e.clientY]);
    if (pinch && touches.size === 2) {
      const now = pinchState(), o = state.orbit;
      if (state.camera !== "auto") { state.camera = "auto"; $("camera").value = "auto"; }
      if (now.d > 0 && pinch.d > 0) o.dist *= pinch.d / now.d;
      const { tx, ty } = currentView();
      const v = lookTo(orbitEye().eye, scale(orbitEye().dir, -1), state.scene.axes.up);
      const r = [v[0], v[4], v[8]], u = [v[1], v[5], v[9]], k = 2 * o.dist / canvas.height;
      const dx = now.x - pinch.x, dy = now.y - pinch.y;
      o.target = add(o.target, add(scale(r, -dx * k * tx / aspect()), scale(u, dy * k * ty)));
      pinch = now;
      draw();
      return;
    }
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag.x = e.clientX; drag.y = e.clientY;
    const o = state.orbit;
    if (state.camera !== "auto") { state.camera = "auto"; $("camera").value = "auto"; }
    if (drag.pan) {
      const { tx, ty } = currentView();
      const v = lookTo(orbitEye().eye, scale(orbitEye().dir, -1), state.scene.axes.up);
      const r = [v[0], v[4], v[8]], u = [v[1], v[5], v[9]];
      const k = 2 * o.dist / canvas.height;
      o.target = add(o.target, add(scale(r, -dx * k * tx / aspect()), scale(u, dy * k * ty)));
    } else {
      o.az -= dx * 0.01;
      o.el = Math.max(-1.55, Math.min(1.55, o.el + dy * 0.01));
    }
    draw();
  });
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    state.orbit.dist *= Math.exp(e.deltaY * 0.001);
    if (state.camera !== "auto") { state.camera = "auto"; $("camera").value = "auto"; }
    draw();
  }, { passive: false });
  new ResizeObserver(() => draw()).observe(canvas);
}

// ---- test hooks ----
// Share of pixels that differ from the background, and a copy of the pixels to compare with.
function readPixels() {
  draw();
  const w = canvas.width, h = canvas.height, px = new Uint8Array(w * h * 4);
  gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
  return px;
}
window.keyscene = {
  setFrame: (f) => setFrame(f),
  setHidden: (n, hidden) => {
    state.userHidden[n] = hidden;
    const eye = document.querySelector(`input[data-eye="${n}"]`);
    if (eye) eye.checked = !hidden;
    draw();
  },
  frame: () => state.frame,
  // The camera looked through: a camera node's index as a string, or "auto" (the orbit camera).
  camera: () => state.camera,
  // Looks through camera node `node` ("auto": the orbit camera).
  setCamera: (node) => { state.camera = String(node); $("camera").value = String(node); draw(); },
  // "Frame all": back to render's automatic camera (orbit reset).
  frameAll: () => frameAll(),
  setOverlay: (name, on) => {
    state.overlays[name] = on;
    const box = document.querySelector(`input[data-overlay="${name}"]`);
    if (box) box.checked = on;
    draw();
  },
  canvasSize: () => [canvas.width, canvas.height],
  // Where the page draws vertex `v` of the mesh node `node` shows: that one vertex is drawn
  // alone as a one-pixel point through the same matrices as the mesh (mesh_to_world, or the
  // deformed world position, then the view and projection), read back, and the drawn
  // pixel's centre returned as {x, y} (pixels, x right, y down from the canvas' top left),
  // or null when nothing was drawn. The scene is drawn again afterwards.
  markVertex: (node, v) => {
    draw();
    const pose = state.pose, m = pose.mesh[node], mesh = m == null ? null : state.meshes[m];
    if (!mesh || !(v < mesh.V)) return null;
    let p = Array.from(mesh.positions.subarray(v * 3, v * 3 + 3)), model = pose.mesh_to_world[node];
    if (state.scene.meshes[m].deformed) {
      const d = pose.deformed.find((e) => e.node === node);
      if (!d) return null;
      p = d.positions.slice(v * 3, v * 3 + 3); model = IDENTITY4;
    }
    const { view, proj } = currentView();
    const w = canvas.width, h = canvas.height;
    gl.viewport(0, 0, w, h);
    gl.clearColor(0, 0, 0, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.disable(gl.DEPTH_TEST);
    drawLines(p, [1, 1, 1], gl.POINTS, model, view, proj, 1);
    const px = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
    let sx = 0, sy = 0, k = 0;
    for (let row = 0; row < h; row++) {
      for (let x = 0; x < w; x++) {
        if (px[(row * w + x) * 4] > 128) { sx += x + 0.5; sy += h - 1 - row + 0.5; k++; }
      }
    }
    gl.enable(gl.DEPTH_TEST);
    draw();
    return k ? { x: sx / k, y: sy / k, pixels: k } : null;
  },
  coverage: () => {
    const px = readPixels(), bg = BACKGROUND.map((c) => Math.round(c * 255));
    let n = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (Math.abs(px[i] - bg[0]) > 2 || Math.abs(px[i + 1] - bg[1]) > 2 || Math.abs(px[i + 2] - bg[2]) > 2) n++;
    }
    return n / (px.length / 4);
  },
  snapshot: () => { window.keysceneSnapshot = readPixels(); return true; },
  changedSinceSnapshot: () => {
    const a = window.keysceneSnapshot, b = readPixels();
    if (!a || a.length !== b.length) return 1;
    let n = 0;
    for (let i = 0; i < a.length; i += 4) if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2]) n++;
    return n / (a.length / 4);
  },
};

// ---- start ----
function fail(message) {
  window.keysceneError = message;
  $("errortext").textContent = message;
  $("error").style.display = "block";
  window.keysceneReady = true;
}

// ---- --watch: the server counts reloads at /version; when it changes, the page keeps its
// view (camera, frame, animation, overlays, hidden nodes) in sessionStorage and loads again.
const SAVED = "keyscene-view";
function watchVersion() {
  const poll = async () => {
    try {
      const v = await (await fetch("/version")).json();
      if (v.version !== state.version) {
        if (state.scene) {
          sessionStorage.setItem(SAVED, JSON.stringify({
            file: state.scene.file, nodes: nodeNames(state.scene), orbit: state.orbit, camera: state.camera, frame: state.frame,
            animation: state.animation, overlays: state.overlays, userHidden: state.userHidden,
            playing: state.playing,
          }));
        }
        location.reload();
        return;
      }
    } catch (e) { /* the server is restarting or gone: keep asking */ }
    setTimeout(poll, 500);
  };
  setTimeout(poll, 500);
}

const nodeNames = (s) => s.nodes.map((n) => n.name).join("\n");

// The view kept before a --watch reload, when it was of the same file. The camera and hidden
// nodes are kept only when the node list is the same (the scene re-exported); otherwise the
// page frames the new scene.
function takeSaved(s) {
  let saved = null;
  try { saved = JSON.parse(sessionStorage.getItem(SAVED)); } catch (e) { saved = null; }
  sessionStorage.removeItem(SAVED);
  if (!saved || saved.file !== s.file) return null;
  if (saved.nodes !== nodeNames(s)) { saved.orbit = null; saved.camera = "auto"; saved.userHidden = null; }
  if (saved.animation != null && !(saved.animation < s.animations.length)) saved.animation = s.animation;
  if (!Array.isArray(saved.userHidden) || saved.userHidden.length !== s.nodes.length) saved.userHidden = null;
  if (saved.camera !== "auto" && !(s.nodes[Number(saved.camera)] && s.nodes[Number(saved.camera)].kind === "camera")) saved.camera = "auto";
  return saved;
}

async function start() {
  const ver = await (await fetch("/version")).json();
  state.version = ver.version;
  window.keysceneVersion = ver.version;
  if (ver.watch) watchVersion();
  const r = await fetch("/scene");
  const s = await r.json();
  if (s.error) { fail(s.error); return; }
  const saved = takeSaved(s);
  initGl();
  initLines();
  state.scene = s;
  state.animation = s.animation;
  state.userHidden = s.nodes.map(() => false);
  if (saved) {
    state.animation = saved.animation;
    if (saved.userHidden) state.userHidden = saved.userHidden;
    Object.assign(state.overlays, saved.overlays || {});
  }
  const used = new Set(s.nodes.map((n) => n.mesh).filter((m) => m != null));
  state.meshes = await Promise.all(s.meshes.map(async (_, i) => {
    if (!used.has(i) && s.meshes.length > 64) return null;
    const b = await fetch(`/mesh/${i}`);
    if (!b.ok) return null;
    return parseMesh(await b.arrayBuffer());
  }));
  state.textures = await Promise.all(s.materials.map((m) => (m.texture ? loadTexture(m.texture) : null)));
  buildPanels();
  buildOutliner();
  controls();
  await setFrame(saved && isFinite(saved.frame) ? saved.frame : range()[0]);
  frameAll();
  // Open on the scene's first camera, as render does by default (and 3D Studio, 3ds Max and
  // Play3da open a scene); the orbit camera stays framed for "frame all".
  if (s.first_camera != null) { state.camera = String(s.first_camera); $("camera").value = state.camera; draw(); }
  if (saved) {
    if (saved.orbit) Object.assign(state.orbit, saved.orbit);
    state.camera = saved.camera; $("camera").value = saved.camera;
    for (const eye of document.querySelectorAll("input[data-eye]")) eye.checked = !state.userHidden[Number(eye.dataset.eye)];
    setPlaying(!!saved.playing);
    draw();
  }
  window.keysceneReady = true;
  requestAnimationFrame(tick);
}

start().catch((e) => fail(String(e && e.stack || e)));

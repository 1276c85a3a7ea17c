"use strict";
window.keysceneReady = false;
fetch("/scene").then(r => r.json()).then(s => {
  document.getElementById("info").textContent = s.error ? s.error : s.file;
  window.keysceneReady = true;
});

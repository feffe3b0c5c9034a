// mobile-agent console, live page: the phone's screen from /live/stream (multipart JPEG frames, read with fetch
// so the page knows each frame and its headers), and the controller's input sent to /live/input.
(function () {
  "use strict";
  var root = document.getElementById("live-phone");
  if (!root) { return; }
  var img = document.getElementById("screen");
  var stats = document.getElementById("live-stats");
  var state = document.getElementById("control-state");
  var note = document.getElementById("secure-note");
  var errorBox = document.getElementById("live-error");
  var take = document.getElementById("take"), release = document.getElementById("release");
  var typeText = document.getElementById("type-text"), typeSend = document.getElementById("type-send");
  var phone = root.dataset.phone, viewer = root.dataset.viewer, csrf = root.dataset.csrf;
  var episode = root.dataset.episode || null, handBack = document.getElementById("hand-back");
  var control = "none";
  var frames = window.__liveFrames = [];  // [arrival ms (Date.now), seq, checksum] for tests and benchmarks
  var shown = null;

  function checksum(bytes) {
    var h = 0;
    for (var i = 0; i < bytes.length; i += 7) { h = (h * 31 + bytes[i]) | 0; }
    return h;
  }

  function indexOf(buf, len, pattern, from) {
    outer: for (var i = from; i <= len - pattern.length; i++) {
      for (var j = 0; j < pattern.length; j++) { if (buf[i + j] !== pattern[j]) { continue outer; } }
      return i;
    }
    return -1;
  }

  var SEP = [13, 10, 13, 10];
  function show(headers, body) {
    if ((headers["content-type"] || "").indexOf("image/") !== 0) {
      stats.textContent = new TextDecoder().decode(body);
      return;
    }
    var now = Date.now();
    var seq = parseInt(headers["x-seq"] || "0", 10);
    frames.push([now, seq, checksum(body)]);
    if (frames.length > 2000) { frames.splice(0, 1000); }
    var url = URL.createObjectURL(new Blob([body], { type: "image/jpeg" }));
    img.onload = function () { if (shown) { URL.revokeObjectURL(shown); } shown = url; };
    img.src = url;
    img.dataset.seq = String(seq);
    note.hidden = headers["x-secure"] !== "1";
    setControl(headers["x-control"] || "none", decodeURIComponent(headers["x-controller"] || ""));
    var recent = frames.filter(function (f) { return now - f[0] < 2000; }).length / 2;
    stats.textContent = recent.toFixed(1) + " frames/s · frame " + seq;
  }

  function setControl(value, who) {
    control = value;
    root.classList.toggle("watching", value !== "you");
    take.disabled = value === "you";
    release.disabled = value !== "you";
    if (handBack) { handBack.disabled = value !== "you"; }
    typeText.disabled = typeSend.disabled = value !== "you";
    root.querySelectorAll("button[data-key]").forEach(function (b) { b.disabled = value !== "you"; });
    state.textContent = value === "you" ? "you hold control" : (value === "other" ? who + " holds control; you watch" : "nobody holds control");
    state.dataset.control = value;
  }

  function read() {
    fetch(root.dataset.stream, { credentials: "same-origin", cache: "no-store" }).then(function (response) {
      if (!response.ok || !response.body) { throw new Error("the stream answered " + response.status); }
      var reader = response.body.getReader();
      var buf = new Uint8Array(1 << 20), len = 0;
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) { read(); return null; }  // the console ended this stream: open the next at once
          if (len + chunk.value.length > buf.length) {
            var bigger = new Uint8Array(Math.max(buf.length * 2, len + chunk.value.length));
            bigger.set(buf.subarray(0, len)); buf = bigger;
          }
          buf.set(chunk.value, len); len += chunk.value.length;
          for (;;) {
            var end = indexOf(buf, len, SEP, 0);
            if (end < 0) { break; }
            var lines = new TextDecoder().decode(buf.subarray(0, end)).split("\r\n"), headers = {};
            lines.forEach(function (line) { var k = line.indexOf(":"); if (k > 0) { headers[line.slice(0, k).trim().toLowerCase()] = line.slice(k + 1).trim(); } });
            var size = parseInt(headers["content-length"] || "-1", 10);
            if (size < 0 || len < end + 4 + size + 2) { break; }
            show(headers, buf.slice(end + 4, end + 4 + size));
            buf.copyWithin(0, end + 4 + size + 2, len); len -= end + 4 + size + 2;
          }
          return pump();
        });
      }
      return pump();
    }).catch(function (e) {
      stats.textContent = "reconnecting (" + e.message + ")";
      setTimeout(read, 1000);
    });
  }

  function post(path, data) {
    data.phone = phone; data.viewer = viewer;
    return fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(data)
    }).then(function (r) {
      return r.json().catch(function () { return { error: "the console answered " + r.status }; }).then(function (body) {
        errorBox.hidden = !body.error; errorBox.textContent = body.error || "";
        return body;
      });
    });
  }

  take.addEventListener("click", function () {
    post("/live/control", episode ? { op: "take", episode: episode } : { op: "take" }).then(function (b) { if (!b.error) { setControl("you", b.who); } });
  });
  release.addEventListener("click", function () {
    post("/live/control", { op: "release" }).then(function (b) { if (!b.error) { setControl("none", ""); } });
  });
  if (handBack) {
    handBack.addEventListener("click", function () {
      post("/live/control", { op: "hand_back" }).then(function (b) {
        if (!b.error) { setControl("none", ""); handBack.hidden = true; state.textContent = "handed back: " + b.reply; }
      });
    });
  }
  root.querySelectorAll("button[data-key]").forEach(function (b) {
    b.addEventListener("click", function () { post("/live/input", { kind: "key", key: b.dataset.key }); });
  });
  document.getElementById("type-form").addEventListener("submit", function (e) {
    e.preventDefault();
    if (typeText.value) { post("/live/input", { kind: "type", text: typeText.value }).then(function () { typeText.value = ""; }); }
  });

  var down = null;
  function at(e) {
    var r = img.getBoundingClientRect();
    return { x: Math.min(1, Math.max(0, (e.clientX - r.left) / r.width)), y: Math.min(1, Math.max(0, (e.clientY - r.top) / r.height)), t: Date.now() };
  }
  img.addEventListener("pointerdown", function (e) { down = at(e); e.preventDefault(); });
  img.addEventListener("pointerup", function (e) {
    if (!down) { return; }
    var up = at(e), start = down; down = null;
    var moved = Math.hypot((up.x - start.x) * img.width, (up.y - start.y) * img.height);
    var ms = Math.min(10000, Math.max(1, up.t - start.t));
    if (moved < 8) {
      post("/live/input", ms > 600 ? { kind: "long_press", x: start.x, y: start.y, duration_ms: ms } : { kind: "tap", x: start.x, y: start.y });
    } else {
      post("/live/input", { kind: "swipe", x: start.x, y: start.y, x2: up.x, y2: up.y, duration_ms: Math.max(100, ms) });
    }
  });

  read();
})();

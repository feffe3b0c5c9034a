// mobile-agent console: live updates by server-sent events, and click-to-zoom screenshots.
// The page is rendered (and escaped) by the server; this script only swaps in the server's fresh <main>.
(function () {
  "use strict";
  var main = document.getElementById("main");
  var live = document.getElementById("live");
  var busy = false, again = false;

  function refresh() {
    if (main.hasAttribute("data-no-refresh")) { return; }  // the live page updates itself
    if (busy) { again = true; return; }
    busy = true;
    fetch(window.location.href, { headers: { "X-Console-Partial": "1" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html !== null && !document.querySelector("form.answer input:focus")) {
          main.innerHTML = html;  // server-rendered, autoescaped
          document.body.dataset.updated = String(Date.now());
        }
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }

  if (window.EventSource) {
    var source = new EventSource("/events");
    source.addEventListener("change", function (e) {
      document.body.dataset.lastStep = JSON.parse(e.data).step;
      refresh();
    });
    source.onopen = function () { if (live) { live.textContent = "live"; live.className = "ok"; } };
    source.onerror = function () { if (live) { live.textContent = "reconnecting"; live.className = "muted"; } };
  }

  var zoom = document.getElementById("zoom");
  document.addEventListener("click", function (e) {
    var img = e.target.closest ? e.target.closest("img.zoomable") : null;
    if (img && zoom) {
      zoom.querySelector("img").src = img.dataset.full || img.src;
      zoom.hidden = false;
      e.preventDefault();
    } else if (zoom && !zoom.hidden && e.target.closest("#zoom")) {
      zoom.hidden = true;
    }
  });
  document.addEventListener("keydown", function (e) { if (e.key === "Escape" && zoom) { zoom.hidden = true; } });
})();

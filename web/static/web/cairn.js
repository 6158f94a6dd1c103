// SPDX-License-Identifier: Apache-2.0 (Cairn: see LICENSE and NOTICE at the top of the checkout)
// Cairn's pages: keyboard shortcuts, copy buttons, the collapsible subtopic tree. No framework.
(function () {
  "use strict";
  // "/" focuses the search box (unless typing somewhere already).
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    var typing = t.closest && t.closest("input, textarea, select, [contenteditable]");
    if (e.key === "/" && !typing) {
      var box = document.getElementById("q") || document.querySelector("[data-shortcut='/']");
      if (box) { e.preventDefault(); box.focus(); box.select(); }
    }
    // Arrow keys move between the search box and the results.
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      var links = Array.prototype.slice.call(document.querySelectorAll(".results a.title"));
      if (!links.length) return;
      var i = links.indexOf(document.activeElement);
      if (t.id === "q" && e.key === "ArrowDown") i = -1;
      else if (i < 0) return;
      e.preventDefault();
      var next = e.key === "ArrowDown" ? Math.min(i + 1, links.length - 1) : i - 1;
      if (next < 0) document.getElementById("q").focus(); else links[next].focus();
    }
  });
  document.addEventListener("click", function (e) {
    var button = e.target.closest("button.copy");
    if (!button) return;
    var text = document.querySelector(button.dataset.copy).textContent.trim();
    var done = function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 1500); };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, done);
    else {
      var area = document.createElement("textarea"); area.value = text; document.body.appendChild(area);
      area.select(); try { document.execCommand("copy"); } catch (err) { /* shown anyway */ }
      area.remove(); done();
    }
  });
  // A select that submits its form when changed (the Content-Security-Policy allows no onchange=).
  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t.matches && t.matches("[data-submit-on-change]") && t.form) t.form.requestSubmit();
  });
  // Subtopic tree: a toggle on each node with children hides or shows everything below it.
  function initTree() {
    var items = Array.prototype.slice.call(document.querySelectorAll(".tree li[data-path]"));
    items.forEach(function (li) {
      var path = li.dataset.path;
      var below = items.filter(function (o) { return o.dataset.path.indexOf(path + "/") === 0; });
      if (!below.length) { li.insertAdjacentHTML("afterbegin", '<span class="toggle"></span>'); return; }
      var b = document.createElement("button");
      b.type = "button"; b.className = "toggle"; b.setAttribute("aria-expanded", "true");
      b.setAttribute("aria-label", "Collapse " + path); b.textContent = "▾";
      b.addEventListener("click", function () {
        var open = b.getAttribute("aria-expanded") !== "true";
        b.setAttribute("aria-expanded", String(open)); b.textContent = open ? "▾" : "▸";
        b.setAttribute("aria-label", (open ? "Collapse " : "Expand ") + path);
        below.forEach(function (o) { o.classList.toggle("hidden", !open); });
      });
      li.insertBefore(b, li.firstChild);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initTree);
  else initTree();
})();

/* Cairn: turn .cairn-markdown textareas into EasyMDE editors. The preview is rendered and
   sanitized by the server (the same renderer as everywhere else), never by the browser. */
(function () {
  "use strict";
  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }
  function previewUrl() {
    var parts = window.location.pathname.split("/knowledge/entry/");
    return parts[0] + "/knowledge/entry/preview/";
  }
  var pending = null;
  function serverPreview(text, preview) {
    if (pending) { clearTimeout(pending); }
    pending = setTimeout(function () {
      var body = new URLSearchParams();
      body.append("text", text);
      fetch(previewUrl(), {
        method: "POST",
        headers: { "X-CSRFToken": csrfToken() },
        body: body,
        credentials: "same-origin",
      })
        .then(function (r) { return r.ok ? r.text() : "<p>Preview unavailable.</p>"; })
        .then(function (html) { preview.innerHTML = html; });
    }, 150);
    return preview.innerHTML || "<p>Rendering…</p>";
  }
  document.addEventListener("DOMContentLoaded", function () {
    if (typeof EasyMDE === "undefined") { return; }
    document.querySelectorAll("textarea.cairn-markdown").forEach(function (el) {
      new EasyMDE({
        element: el,
        autoDownloadFontAwesome: false,
        spellChecker: false,
        forceSync: true,
        status: ["lines", "words", "cursor"],
        previewRender: serverPreview,
        toolbar: ["bold", "italic", "heading", "|", "quote", "unordered-list", "ordered-list",
                  "|", "link", "code", "table", "horizontal-rule", "|", "preview",
                  "side-by-side", "fullscreen", "|", "guide"],
      });
    });
  });
})();

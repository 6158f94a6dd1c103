/* SPDX-License-Identifier: Apache-2.0 (Cairn: see LICENSE and NOTICE at the top of the checkout) */
/* Cairn: turn .cairn-markdown textareas into EasyMDE editors with a live preview beside them.
   Every preview is rendered and sanitized by the server (the same renderer as the entry page),
   never by the browser; the side panel also lists the links and observations a save would
   record, each link marked resolved or missing, and how the draft fits its note type's schema
   (a schema draft: the fields it declares). Ctrl+S / Cmd+S saves and keeps editing. */
(function () {
  "use strict";
  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }
  function base() {
    return window.location.pathname.split("/knowledge/entry/")[0] + "/knowledge/entry/";
  }
  function entryId() {
    var match = window.location.pathname.match(/\/knowledge\/entry\/(\d+)\//);
    return match ? match[1] : "";
  }
  function value(id) {
    var el = document.getElementById(id);
    return el ? el.value : "";
  }
  function post(url, fields) {
    var body = new URLSearchParams();
    Object.keys(fields).forEach(function (k) { body.append(k, fields[k]); });
    return fetch(url, {
      method: "POST",
      headers: { "X-CSRFToken": csrfToken() },
      body: body,
      credentials: "same-origin",
    });
  }
  var pending = null;
  function serverPreview(text, preview) {
    if (pending) { clearTimeout(pending); }
    pending = setTimeout(function () {
      post(base() + "preview/", { text: text })
        .then(function (r) { return r.ok ? r.text() : "<p>Preview unavailable.</p>"; })
        .then(function (html) { preview.innerHTML = html; });
    }, 150);
    return preview.innerHTML || "<p>Rendering…</p>";
  }

  // The metadata as JSON for the preview's schema check, from its fields (knowledge/admin/
  // metadata.py; the server types the values the same way on save) or its raw JSON.
  function metadataDraft() {
    var box = document.getElementById("cairn-meta");
    if (!box) { return value("id_metadata"); }
    var out = {};
    function typed(text, type, array) {
      if (array) {
        return text.split(",").map(function (p) { return p.trim(); }).filter(Boolean)
          .map(function (p) { return typed(p, type, false); });
      }
      if ((type === "integer" || type === "number") && text !== "" && !isNaN(Number(text))) {
        return Number(text);
      }
      if (type === "boolean" && (text === "true" || text === "false")) { return text === "true"; }
      if (type === "any" || type === "object" || type === undefined) {
        try { return JSON.parse(text); } catch (e) { return text; }
      }
      return text;
    }
    box.querySelectorAll("[data-key]").forEach(function (el) {
      var text = el.value.trim();
      if (text) { out[el.dataset.key] = typed(text, el.dataset.type, el.dataset.array === "1"); }
    });
    box.querySelectorAll(".cairn-meta-pair").forEach(function (row) {
      var inputs = row.querySelectorAll("input");
      var key = inputs[0].value.trim(), text = inputs[1].value.trim();
      if (key && text && !(key in out)) { out[key] = typed(text, undefined, false); }
    });
    return JSON.stringify(out);
  }

  function livePanel(editor, panel) {
    var timer = null, sent = 0;
    function refresh() {
      var ticket = ++sent;
      post(base() + "preview/live/", {
        text: editor.value(),
        project: value("id_project"),
        subtopic_path: value("id_subtopic_path"),
        title: value("id_title"),
        kind: value("id_kind"),
        tags: value("id_tags_text"),
        status: value("id_status"),
        metadata: metadataDraft(),
        entry: entryId(),
      })
        .then(function (r) { return r.ok ? r.text() : "<p class=\"errornote\">Preview unavailable.</p>"; })
        .then(function (html) {
          if (ticket !== sent) { return; }  // a newer preview is on its way
          panel.innerHTML = html;  // server-rendered and sanitized
          panel.dataset.rendered = String(ticket);
        });
    }
    function soon() {
      if (timer) { clearTimeout(timer); }
      timer = setTimeout(refresh, 300);
    }
    editor.codemirror.on("change", soon);
    ["id_project", "id_subtopic_path", "id_title", "id_kind", "id_tags_text", "id_status",
     "id_metadata", "cairn-meta"].forEach(function (id) {
      var el = document.getElementById(id);
      if (el) { el.addEventListener("input", soon); el.addEventListener("change", soon); }
    });
    // The project's autocomplete (select2) announces its choice through jQuery only.
    if (window.django && window.django.jQuery) {
      window.django.jQuery("#id_project").on("change", soon);
    }
    refresh();
  }

  function keyboardSave(event) {
    if (!(event.ctrlKey || event.metaKey) || event.altKey || event.key.toLowerCase() !== "s") {
      return;
    }
    // The theme's save buttons are <button>s in the page's footer (form="entry_form").
    var button = document.querySelector("[name=_continue][type=submit]") ||
      document.querySelector("[name=_save][type=submit]");
    if (!button) { return; }
    event.preventDefault();
    button.click();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.addEventListener("keydown", keyboardSave);
    if (typeof EasyMDE === "undefined") { return; }
    document.querySelectorAll("textarea.cairn-markdown").forEach(function (el) {
      var editor = new EasyMDE({
        element: el,
        autoDownloadFontAwesome: false,
        spellChecker: false,
        forceSync: true,
        status: ["lines", "words", "cursor"],
        previewRender: serverPreview,
        toolbar: ["bold", "italic", "heading", "|", "quote", "unordered-list", "ordered-list",
                  "|", "link", "code", "table", "horizontal-rule", "|", "preview",
                  "fullscreen", "|", "guide"],
      });
      var panel = el.closest(".cairn-editor");
      panel = panel && panel.querySelector(".cairn-live");
      if (panel) { livePanel(editor, panel); }
    });
  });
})();

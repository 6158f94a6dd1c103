// SPDX-License-Identifier: Apache-2.0 (Cairn: see LICENSE and NOTICE at the top of the checkout)
// The graph page: entries as nodes (sized by their links), typed relations as edges (Cytoscape.js).
// Hover highlights a node's neighbours, a click opens the entry, "Find" focuses a node, the
// relation check boxes show or hide edge types. Data: /graph/data.json (same origin only).
(function () {
  "use strict";
  var box = document.getElementById("graph");
  if (!box || typeof cytoscape === "undefined") return;
  var status = document.getElementById("graph-status");
  var css = getComputedStyle(document.documentElement);
  var color = function (name) { return css.getPropertyValue(name).trim(); };

  fetch(box.dataset.src, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (data) {
        if (!r.ok) throw new Error(data.error || "error " + r.status);
        return data;
      });
    })
    .then(draw)
    .catch(function (err) { status.textContent = "The graph could not be loaded: " + err.message; });

  function draw(data) {
    if (!data.nodes.length) { status.textContent = "No entries with links to show here."; return; }
    var most = Math.max.apply(null, data.nodes.map(function (n) { return n.degree || 0; }).concat([1]));
    var elements = data.nodes.map(function (n) {
      return { data: { id: String(n.id), label: n.title, short: n.short_id, path: n.path, kind: n.kind, degree: n.degree || 0 } };
    }).concat(data.edges.map(function (e, i) {
      return { data: { id: "e" + i, source: String(e.source), target: String(e.target), type: e.type } };
    }));
    var cy = cytoscape({
      container: box,
      elements: elements,
      minZoom: 0.1, maxZoom: 4, wheelSensitivity: 0.3,
      style: [
        { selector: "node", style: {
          "background-color": color("--accent"), label: "data(label)", color: color("--fg"),
          "font-size": 10, "text-valign": "bottom", "text-margin-y": 3,
          // Long titles wrap onto short lines over a backdrop: the layout makes room for them.
          "text-wrap": "wrap", "text-max-width": "120px",
          "text-background-color": color("--bg"), "text-background-opacity": 0.85,
          "text-background-padding": "1px", "min-zoomed-font-size": 6,
          width: "mapData(degree, 0, " + most + ", 12, 44)", height: "mapData(degree, 0, " + most + ", 12, 44)" } },
        { selector: "edge", style: {
          width: 1.2, "line-color": color("--line"), "target-arrow-color": color("--line"),
          "target-arrow-shape": "triangle", "curve-style": "bezier",
          "font-size": 8, color: color("--muted"), "text-rotation": "autorotate" } },
        { selector: ".faded", style: { opacity: 0.15 } },
        // A relation's type shows on the edges of the node under the pointer, not everywhere.
        { selector: "edge.near", style: { label: "data(type)" } },
        { selector: ".near", style: { "line-color": color("--accent"), "target-arrow-color": color("--accent") } },
        { selector: "node:selected", style: { "border-width": 3, "border-color": color("--warn") } }
      ],
      // Force-directed, with each node's label counted as part of it so none lands on another.
      layout: {
        name: "cose", animate: false, randomize: true, nodeDimensionsIncludeLabels: true,
        nodeRepulsion: function () { return 400000; }, nodeOverlap: 40, idealEdgeLength: function () { return 110; },
        componentSpacing: 90, gravity: 0.3, numIter: 2500, padding: 30
      }
    });
    window.cairnGraph = cy;
    cy.on("mouseover", "node", function (e) {
      cy.elements().addClass("faded");
      e.target.closedNeighborhood().removeClass("faded").addClass("near");
    });
    cy.on("mouseout", "node", function () { cy.elements().removeClass("faded near"); });
    cy.on("tap", "node", function (e) { location.href = box.dataset.entryUrl + e.target.data("short") + "/"; });

    var find = document.getElementById("graph-find");
    if (find) find.addEventListener("input", function () {
      var text = find.value.trim().toLowerCase();
      cy.nodes().unselect();
      if (!text) return;
      var hit = cy.nodes().filter(function (n) { return n.data("label").toLowerCase().indexOf(text) !== -1; }).first();
      if (hit.length) { hit.select(); cy.animate({ center: { eles: hit }, zoom: 1.6 }, { duration: 250 }); }
    });

    var types = document.getElementById("graph-types");
    var seen = {};
    data.edges.forEach(function (e) { seen[e.type] = (seen[e.type] || 0) + 1; });
    Object.keys(seen).sort().forEach(function (type) {
      var label = document.createElement("label");
      var input = document.createElement("input");
      input.type = "checkbox"; input.checked = true; input.value = type;
      input.addEventListener("change", function () {
        cy.edges().filter(function (e) { return e.data("type") === type; })
          .style("display", input.checked ? "element" : "none");
      });
      label.appendChild(input);
      label.appendChild(document.createTextNode(" " + type + " (" + seen[type] + ")"));
      types.appendChild(label);
    });
    status.textContent = data.nodes.length + " entries, " + data.edges.length + " links.";
    var cut = document.getElementById("graph-cut");
    if (cut && data.cut) {
      cut.textContent = "Cut at " + data.limit + " entries (the newest): choose a project or open the graph around an entry to see the rest.";
      cut.hidden = false;
    }
  }
})();

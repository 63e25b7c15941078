/* The maintenance report's charts (python_ops/maintenance/running/report_page.py writes the page).
   Reads the JSON in #report-data and draws each model's charts with uPlot when its section comes
   near the viewport (a 1,000-model page loads at once); window.sparkdeltaReport.renderAll()
   draws every one. Each drawn chart is kept in sparkdeltaReport.charts[model][chart] (uPlot
   instances: .data holds the numbers drawn, .series their labels). */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var report = { data: data, charts: {}, drawn: 0, renderAll: renderAll, ready: false };
  window.sparkdeltaReport = report;

  var UNITS = ["B", "KB", "MB", "GB", "TB", "PB"];
  function sizeText(v) {
    if (v == null) return "-";
    var unit = 0;
    while (Math.abs(v) >= 1000 && unit < UNITS.length - 1) { v /= 1000; unit++; }
    if (unit === 0) return Math.round(v) + " B";
    return v.toFixed(Math.abs(v) < 10 ? 2 : Math.abs(v) < 100 ? 1 : 0) + " " + UNITS[unit];
  }
  function count(v) { return v == null ? "-" : String(Math.round(v * 100) / 100); }
  function seconds(v) {
    if (v == null) return "-";
    if (v === 0) return "0 s";
    if (v > 0 && v < 1) return (v * 1000).toFixed(v < 0.01 ? 1 : 0) + " ms";
    return v.toFixed(v < 10 ? 2 : 1) + " s";
  }
  function when(t) { return new Date(t * 1000).toISOString().slice(0, 16).replace("T", " "); }
  function day(t) { return new Date(t * 1000).toISOString().slice(0, 10); }

  var COLORS = { files: "#4c78a8", small: "#e45756", log: "#72b7b2", bytes: "#4c78a8",
    vacuum: "#f58518", optimize: "#54a24b", cleanup: "#b279a2", time: "#9d755d", build: "#bab0ac" };

  function line(label, stroke, fmt, scale) {
    return { label: label, stroke: stroke, width: 2, value: function (u, v) { return fmt(v); },
      scale: scale || "y", points: { show: true, size: 4 }, spanGaps: false };
  }
  function bars(label, fill, fmt, size, scale) {
    return { label: label, stroke: fill, fill: fill + "cc", width: 1,
      value: function (u, v) { return fmt(v); }, scale: scale || "y",
      paths: uPlot.paths.bars({ size: [size, 60] }), points: { show: false } };
  }

  /* each chart: its title, the series it draws (by name in the model's series), how. */
  var MODEL_CHARTS = [
    { name: "files", title: "files after each build",
      series: [["files", line("live files", COLORS.files, count)],
               ["small_files", line("small files", COLORS.small, count)],
               ["log_files", line("log files", COLORS.log, count)]], fmt: count },
    { name: "bytes", title: "live bytes, and what VACUUM freed",
      series: [["vacuum_bytes", bars("VACUUM freed", COLORS.vacuum, sizeText, 0.6)],
               ["bytes", line("live bytes", COLORS.bytes, sizeText)]], fmt: sizeText },
    { name: "time", title: "maintenance seconds per build",
      series: [["maintenance_s", bars("maintenance", COLORS.time, seconds, 0.6)],
               ["build_s", line("build (right axis)", COLORS.build, seconds, "build")]],
      fmt: seconds },
    { name: "reclaimed", title: "files each op reclaimed",
      series: [["vacuum_files", bars("VACUUM deleted", COLORS.vacuum, count, 0.9)],
               ["optimize_files", bars("OPTIMIZE compacted", COLORS.optimize, count, 0.6)],
               ["cleanup_logs_files", bars("log files deleted", COLORS.cleanup, count, 0.3)]],
      fmt: count }
  ];
  var ESTATE_CHARTS = [
    { name: "estate-time", title: "maintenance seconds per day, every model",
      series: [["maintenance_s", bars("maintenance", COLORS.time, seconds, 0.6)]], fmt: seconds },
    { name: "estate-reclaimed", title: "files reclaimed per day, every model",
      series: [["vacuum_files", bars("VACUUM deleted", COLORS.vacuum, count, 0.9)],
               ["optimize_files", bars("OPTIMIZE compacted", COLORS.optimize, count, 0.6)],
               ["cleanup_logs_files", bars("log files deleted", COLORS.cleanup, count, 0.3)]],
      fmt: count }
  ];

  /* the holders' width, read once (reading it per chart made the browser lay out the whole
     page again for each chart just drawn); read again after a resize */
  var modelWidth = null;
  window.addEventListener("resize", function () { modelWidth = null; });

  function draw(holder, spec, cols, xs, xLabel, xTick, holderWidth) {
    var width = Math.max(240, holderWidth || 300);
    var opts = {
      title: spec.title, width: width, height: 170, legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: false, range: function (u, lo, hi) { return [lo - 0.5, hi + 0.5]; } },
        y: { range: function (u, lo, hi) { return [Math.min(0, lo), hi > 0 ? hi * 1.1 : 1]; } }
      },
      series: [{ label: "build", value: function (u, i) { return i == null ? "-" : xLabel(i); } }],
      axes: [{ incrs: [1, 2, 5, 10, 20, 50, 100], size: 30, space: 50,
               values: function (u, ticks) { return ticks.map(function (i) { return xTick(i); }); } },
             { size: 64, values: function (u, ticks) { return ticks.map(spec.fmt); } }]
    };
    var columns = [xs];
    spec.series.forEach(function (s) { opts.series.push(s[1]); columns.push(cols[s[0]]); });
    if (spec.series.some(function (s) { return s[1].scale === "build"; })) {
      /* the build's seconds on an axis of their own: beside them a hook's milliseconds
         would be a flat line at zero */
      opts.scales.build = { range: opts.scales.y.range };
      opts.axes.push({ scale: "build", side: 1, size: 64, grid: { show: false },
                       values: function (u, ticks) { return ticks.map(spec.fmt); } });
    }
    return new uPlot(opts, columns, holder);
  }

  function drawModel(section) {
    if (section.dataset.drawn) return;
    section.dataset.drawn = "1";
    var m = data.models[Number(section.dataset.index)];
    var s = m.series;
    var xs = s.t.map(function (_, i) { return i + 1; });
    var label = function (i) {
      var t = s.t[Math.round(i) - 1];
      return t == null ? "" : "#" + Math.round(i) + " " + when(t).slice(5);
    };
    var tick = function (i) { return "#" + Math.round(i); };
    var charts = report.charts[m.model] = {};
    var holders = MODEL_CHARTS.map(function (spec) {
      return section.querySelector('[data-chart="' + spec.name + '"]');
    });
    if (modelWidth === null) modelWidth = holders[0].clientWidth;
    MODEL_CHARTS.forEach(function (spec, i) {
      charts[spec.name] = draw(holders[i], spec, s, xs, label, tick, modelWidth);
    });
    report.drawn++;
  }

  function drawEstate() {
    var days = data.totals.days;
    var xs = days.t.map(function (_, i) { return i + 1; });
    var label = function (i) { var t = days.t[Math.round(i) - 1]; return t == null ? "" : day(t); };
    var charts = report.charts["(estate)"] = {};
    ESTATE_CHARTS.forEach(function (spec) {
      var holder = document.querySelector('[data-chart="' + spec.name + '"]');
      charts[spec.name] = draw(holder, spec, days, xs, label, function (i) {
        return label(i).slice(5);
      }, holder.clientWidth);
    });
  }

  function renderAll() {
    document.querySelectorAll("section.model").forEach(drawModel);
    return report.drawn;
  }

  function filter(words) {
    var needle = words.trim().toLowerCase();
    document.querySelectorAll("section.model").forEach(function (section) {
      section.hidden = needle !== "" && section.dataset.model.toLowerCase().indexOf(needle) < 0;
    });
  }

  drawEstate();
  var sections = document.querySelectorAll("section.model");
  if ("IntersectionObserver" in window) {
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (e.isIntersecting) { drawModel(e.target); seen.unobserve(e.target); }
      });
    }, { rootMargin: "800px 0px" });
    sections.forEach(function (section) { seen.observe(section); });
  } else {
    renderAll();
  }
  var box = document.getElementById("filter");
  if (box) box.addEventListener("input", function () { filter(box.value); });
  report.ready = true;
})();

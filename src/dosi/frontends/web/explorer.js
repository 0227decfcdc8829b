// dosi explorer: reads the catalog from /v1/metrics and /v1/dimensions, runs /v1/query, and
// draws the table, the SQL and an SVG chart (a line for time series, bars otherwise).
// Plain browser JavaScript: no build step, no network beyond this server.
"use strict";

const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
  "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#8c564b"];
const NUMERIC = new Set(["Integer", "Decimal", "Float", "Double", "Number"]);
const filters = []; // {field, op, value, sql}
let fieldTypes = {};
const TIME_SUFFIX = /(^metric_time$|^window_start$|__(day|week|month|quarter|year)$)/;

try { localStorage.removeItem("dosi-token"); } catch (e) { /* storage disabled */ } // older versions kept it

function headers() {
  const h = { "Content-Type": "application/json" };
  // the token lives only in the field (this tab's memory), never in localStorage
  const token = $("token").value;
  if (token) h["Authorization"] = "Bearer " + token;
  return h;
}

async function api(path, body) {
  const init = body === undefined
    ? { headers: headers() }
    : { method: "POST", headers: headers(), body: JSON.stringify(body) };
  const res = await fetch(path, init);
  const data = await res.json();
  if (!res.ok) {
    const err = new Error(data.message || res.statusText);
    err.body = data;
    throw err;
  }
  return data;
}

function showError(err) {
  const b = err.body || {};
  let text = b.code ? `[${b.code}] ${b.message}` : String(err.message || err);
  if (b.candidates && b.candidates.length) text += `\ndid you mean: ${b.candidates.join(", ")}`;
  if (b.hint) text += `\nhint: ${b.hint}`;
  $("error").textContent = text;
}

function option(value, label) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = label || value;
  return o;
}

async function loadCatalog() {
  try {
    const [metrics, dims] = await Promise.all([api("/v1/metrics"), api("/v1/dimensions")]);
    const ms = $("metrics");
    ms.replaceChildren(...metrics.map((m) => option(m.name, m.name + (m.window_family ? `  (${m.window_family})` : ""))));
    if (ms.options.length) ms.options[0].selected = true;
    const ds = $("dimensions");
    // metric_time is the grain control; the lists hold stored fields, once each
    const fields = dims.filter((d) => d.name !== "metric_time");
    const usable = fields.filter((d) => d.is_dimension);
    ds.replaceChildren(...usable.map((d) => option(d.name)));
    fieldTypes = Object.fromEntries(fields.map((d) => [d.name, d.datatype]));
    $("filter-field").replaceChildren(...fields.map((d) => option(d.name)));
    $("model-info").textContent = `${metrics.length} metrics, ${usable.length} dimensions`;
    document.body.dataset.catalog = "loaded";
  } catch (err) {
    $("model-info").textContent = "catalog unavailable";
    showError(err);
  }
}

function buildQuery() {
  const q = { metrics: [...$("metrics").selectedOptions].map((o) => o.value) };
  const groupBy = [];
  const grain = $("grain").value;
  if (grain) groupBy.push("metric_time:" + grain);
  groupBy.push(...[...$("dimensions").selectedOptions].map((o) => o.value));
  if (groupBy.length) q.group_by = groupBy;
  const start = $("start").value, end = $("end").value;
  if (start || end) {
    q.time_range = {};
    if (start) q.time_range.start = start;
    if (end) q.time_range.end = end;
  }
  const parts = filters.map((f) => f.sql);
  const where = $("where").value.trim();
  if (where) parts.push(`(${where})`);
  if (parts.length) q.where_sql = parts.join(" AND ");
  if (grain) q.order_by = [{ key: "metric_time__" + grain }];
  const limit = parseInt($("limit").value, 10);
  if (!Number.isNaN(limit)) q.limit = limit;
  return q;
}

function renderTable(result) {
  const t = $("result");
  t.replaceChildren();
  const head = t.createTHead().insertRow();
  for (const c of result.columns) {
    const th = document.createElement("th");
    th.textContent = c;
    head.appendChild(th);
  }
  const body = t.createTBody();
  for (const row of result.rows) {
    const tr = body.insertRow();
    for (const c of result.columns) {
      const td = tr.insertCell();
      const v = row[c];
      td.textContent = v === null || v === undefined ? "∅" : String(v);
      if (typeof v === "number") td.className = "num";
    }
  }
}

function el(name, attrs, text) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmt(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toPrecision(3) + "G";
  if (a >= 1e6) return (v / 1e6).toPrecision(3) + "M";
  if (a >= 1e3) return (v / 1e3).toPrecision(3) + "k";
  return Number(v.toPrecision(3)).toString();
}

// The chart model: the first key column is the x axis; it is a time series when that column is
// a time bucket. One series per metric (and per value of a second key column, for lines).
function chartModel(result) {
  const metrics = (result.outputs || []).map((o) => o.column).filter((c) => result.columns.includes(c));
  const keys = result.columns.filter((c) => !metrics.includes(c));
  const x = keys[0];
  const isTime = x !== undefined && TIME_SUFFIX.test(x);
  const label = (r, cols) => cols.map((c) => (r[c] === null ? "∅" : String(r[c]))).join(" / ") || "total";
  if (isTime) {
    const cats = [...new Set(result.rows.filter((r) => r[x] !== null).map((r) => String(r[x])))].sort();
    const split = keys.slice(1);
    const series = new Map();
    for (const r of result.rows) {
      if (r[x] === null) continue;
      for (const m of metrics) {
        const name = split.length ? `${m} (${label(r, split)})` : m;
        if (!series.has(name)) series.set(name, new Map());
        series.get(name).set(String(r[x]), typeof r[m] === "number" ? r[m] : null);
      }
    }
    return { kind: "line", cats, series: [...series].map(([name, pts]) => ({ name, values: cats.map((c) => (pts.has(c) ? pts.get(c) : null)) })) };
  }
  const cats = result.rows.map((r) => label(r, keys));
  return { kind: "bar", cats, series: metrics.map((m) => ({ name: m, values: result.rows.map((r) => (typeof r[m] === "number" ? r[m] : null)) })) };
}

function renderChart(result) {
  const box = $("chart");
  box.replaceChildren();
  const model = chartModel(result);
  const W = 860, H = 340, L = 64, R = 16, T = 16, B = 80;
  const legendH = 18 * model.series.length + 14;
  const svg = el("svg", { viewBox: `0 0 ${W} ${H + legendH}`, class: `dosi-chart dosi-chart-${model.kind}`, role: "img", "data-kind": model.kind });
  const pw = W - L - R, ph = H - T - B;
  const values = model.series.flatMap((s) => s.values.filter((v) => v !== null));
  let lo = Math.min(0, ...values), hi = Math.max(0, ...values);
  if (hi === lo) hi = lo + 1;
  const y = (v) => T + ph - ((v - lo) / (hi - lo)) * ph;
  for (let i = 0; i <= 4; i++) {
    const v = lo + ((hi - lo) * i) / 4;
    svg.appendChild(el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#e4e7eb" }));
    svg.appendChild(el("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 11 }, fmt(v)));
  }
  const n = Math.max(1, model.cats.length);
  const step = Math.max(1, Math.floor(n / 12));
  const xlabel = (xx, text) => {
    const clean = text.replace(/ 00:00:00$/, "");
    const t = clean.length > 16 ? clean.slice(0, 15) + "…" : clean;
    svg.appendChild(el("text", { x: xx, y: T + ph + 14, "text-anchor": "end", "font-size": 11, transform: `rotate(-40 ${xx} ${T + ph + 14})` }, t));
  };
  if (model.kind === "line") {
    const xpos = (i) => L + (n > 1 ? (pw * i) / (n - 1) : pw / 2);
    model.series.forEach((s, k) => {
      const color = PALETTE[k % PALETTE.length];
      let d = "", pen = "M";
      s.values.forEach((v, i) => {
        if (v === null) { pen = "M"; return; }
        d += `${pen}${xpos(i).toFixed(1)},${y(v).toFixed(1)} `;
        pen = "L";
      });
      const path = el("path", { d, fill: "none", stroke: color, "stroke-width": 2, class: "series" });
      path.appendChild(el("title", {}, s.name));
      svg.appendChild(path);
    });
    model.cats.forEach((c, i) => { if (i % step === 0) xlabel(xpos(i), c); });
  } else {
    const group = pw / n;
    const bw = (group * 0.8) / Math.max(1, model.series.length);
    model.series.forEach((s, k) => {
      const color = PALETTE[k % PALETTE.length];
      s.values.forEach((v, i) => {
        if (v === null) return;
        const y0 = Math.min(y(v), y(0)), y1 = Math.max(y(v), y(0));
        const rect = el("rect", { x: L + group * i + group * 0.1 + bw * k, y: y0, width: bw, height: Math.max(y1 - y0, 0.5), fill: color, class: "bar" });
        rect.appendChild(el("title", {}, `${model.cats[i]} ${s.name}: ${v}`));
        svg.appendChild(rect);
      });
    });
    model.cats.forEach((c, i) => { if (i % step === 0) xlabel(L + group * (i + 0.5), c); });
  }
  svg.appendChild(el("line", { x1: L, x2: W - R, y1: T + ph, y2: T + ph, stroke: "#333" }));
  model.series.forEach((s, k) => {
    const yy = H + 14 + 18 * k;
    svg.appendChild(el("rect", { x: L, y: yy - 9, width: 12, height: 10, fill: PALETTE[k % PALETTE.length] }));
    svg.appendChild(el("text", { x: L + 18, y: yy, "font-size": 12 }, s.name));
  });
  box.appendChild(svg);
}

async function run() {
  const button = $("run");
  $("error").textContent = "";
  const q = buildQuery();
  if (!q.metrics.length) {
    showError(new Error("pick at least one metric"));
    return;
  }
  button.disabled = true;
  $("status").textContent = "running…";
  const started = performance.now();
  try {
    const result = await api("/v1/query", q);
    renderTable(result);
    renderChart(result);
    $("sql").textContent = result.sql;
    $("status").textContent = `${result.row_count} rows in ${Math.round(performance.now() - started)} ms`;
    document.body.dataset.state = "done";
  } catch (err) {
    showError(err);
    $("status").textContent = "";
    document.body.dataset.state = "error";
  } finally {
    button.disabled = false;
  }
}

// A literal for the filter builder: numbers stay numbers on numeric fields, everything else is
// a quoted string (the server parses and checks the predicate against the model).
function literal(field, text) {
  const v = text.trim();
  if (NUMERIC.has(fieldTypes[field]) && v !== "" && !Number.isNaN(Number(v))) return String(Number(v));
  return "'" + v.replaceAll("'", "''") + "'";
}

function addFilter() {
  const field = $("filter-field").value;
  const op = $("filter-op").value;
  const value = $("filter-value").value;
  if (!field) return;
  let sql;
  if (op === "is null") sql = `${field} IS NULL`;
  else if (op === "is not null") sql = `${field} IS NOT NULL`;
  else if (op === "in") sql = `${field} IN (${value.split(",").map((x) => literal(field, x)).join(", ")})`;
  else sql = `${field} ${op} ${literal(field, value)}`;
  filters.push({ field, op, value, sql });
  $("filter-value").value = "";
  renderFilters();
}

function renderFilters() {
  $("filters").replaceChildren(...filters.map((f, i) => {
    const li = document.createElement("li");
    li.textContent = f.sql;
    const x = document.createElement("button");
    x.type = "button";
    x.textContent = "×";
    x.title = "remove filter";
    x.addEventListener("click", () => { filters.splice(i, 1); renderFilters(); });
    li.appendChild(x);
    return li;
  }));
}

$("add-filter").addEventListener("click", addFilter);
$("run").addEventListener("click", run);
loadCatalog();

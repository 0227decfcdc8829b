// dosi explorer: reads the catalog (/v1/metrics, /v1/metrics/{name}, /v1/dimensions), runs
// /v1/query?chart=true&pretty=true, and shows the table (numbers by each column's format), the
// pretty SQL and the chart: the server's Vega-Lite spec, the same one `dosi query --chart` and
// /v1/chart render, embedded with the vendored vega-embed (CSP-safe: expressions interpreted,
// no eval). The query lives in the address bar's hash, so a link reopens it. Plain browser
// JavaScript: no build step, no network beyond this server.
"use strict";

const $ = (id) => document.getElementById(id);
const NUMERIC = new Set(["Integer", "Decimal", "Float", "Double", "Number"]);
const GRAIN_ORDER = ["second", "minute", "hour", "day", "week", "month", "quarter", "year"];
const filters = []; // {field, op, value, sql}
let fieldTypes = {};
const metricInfo = new Map(); // name -> /v1/metrics/{name}
const reachable = new Map(); // metric -> Set of dimension names (/v1/dimensions?metric=)
let lastQuery = null; // the query of the table on screen (what the downloads fetch)
let chartView = null;
const { formatValue } = window.dosiFormat;

try { localStorage.removeItem("dosi-token"); } catch (e) { /* storage disabled */ } // older versions kept it

function headers(accept) {
  const h = { "Content-Type": "application/json" };
  if (accept) h["Accept"] = accept;
  // the token lives only in the field (this tab's memory), never in storage or the URL
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

const metricsPicker = window.dosiPicker("metrics", onMetricsChange);
const dimensionsPicker = window.dosiPicker("dimensions", () => {});

// -- results on screen ------------------------------------------------------------------------
function clearResults() {
  $("result").replaceChildren();
  $("sql").textContent = "";
  if (chartView) { chartView.finalize(); chartView = null; }
  $("chart").replaceChildren();
  $("download-csv").disabled = $("download-parquet").disabled = true;
  lastQuery = null;
}

function showError(err) {
  clearResults(); // never leave the previous answer beside an error
  const b = err.body || {};
  const box = $("error");
  box.replaceChildren();
  const msg = document.createElement("div");
  msg.textContent = b.code ? `[${b.code}] ${b.message}` : String(err.message || err);
  box.appendChild(msg);
  if (b.candidates && b.candidates.length) {
    const c = document.createElement("div");
    c.textContent = "did you mean: " + b.candidates.join(", ");
    box.appendChild(c);
  }
  if (b.hint) {
    const h = document.createElement("div");
    h.className = "hint";
    h.textContent = "hint: " + b.hint;
    box.appendChild(h);
  }
  if (b.suggested_retry) {
    const retry = document.createElement("button");
    retry.type = "button";
    retry.id = "retry";
    retry.textContent = "Run the suggested query";
    retry.title = JSON.stringify(b.suggested_retry);
    retry.addEventListener("click", () => { applyQuery(b.suggested_retry); run(b.suggested_retry); });
    const what = document.createElement("pre");
    what.textContent = JSON.stringify(b.suggested_retry);
    box.append(retry, what);
  }
  box.hidden = false;
}

function clearError() {
  $("error").hidden = true;
  $("error").replaceChildren();
}

function renderTable(result) {
  const t = $("result");
  t.replaceChildren();
  const formats = result.formats || {};
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
      td.textContent = formatValue(v, formats[c]);
      if (v === null || v === undefined) td.className = "null";
      else if (typeof v === "number" || formats[c]) {
        td.className = "num";
        td.title = String(v); // the exact value
      }
    }
  }
}

async function renderChart(spec) {
  if (!spec) {
    $("chart").textContent = "nothing to chart (no metric column)";
    return;
  }
  if (typeof window.vegaEmbed !== "function") {
    $("chart").textContent = "chart scripts unavailable";
    return;
  }
  const meta = (spec.usermeta || {}).dosi || {};
  const box = $("chart");
  box.dataset.kind = meta.kind || "";
  box.dataset.layout = meta.layout || "";
  box.dataset.series = String((meta.series || []).length);
  const out = await window.vegaEmbed(box, spec, {
    mode: "vega-lite",
    renderer: "svg",
    ast: true, // expressions interpreted: the page's CSP allows no eval
    actions: { export: true, source: false, compiled: false, editor: false },
  });
  chartView = out.view;
}

// -- the query --------------------------------------------------------------------------------
function buildQuery() {
  const q = { metrics: metricsPicker.values() };
  const groupBy = [];
  const grain = $("grain").value;
  if (grain) groupBy.push("metric_time:" + grain);
  groupBy.push(...dimensionsPicker.values());
  if (groupBy.length) q.group_by = groupBy;
  const start = $("start").value, end = $("end").value;
  if (start || end) {
    q.time_range = {};
    if (start) q.time_range.start = start;
    if (end) q.time_range.end = end;
  }
  const parts = filters.map((f) => f.sql);
  const where = $("where").value.trim();
  if (where) parts.push(filters.length ? `(${where})` : where);
  if (parts.length) q.where_sql = parts.join(" AND ");
  if (grain) q.order_by = [{ key: "metric_time__" + grain }];
  const limit = parseInt($("limit").value, 10);
  if (!Number.isNaN(limit)) q.limit = limit;
  return q;
}

// The page's controls set from a query object (a shared link or a suggested retry).
function applyQuery(q) {
  metricsPicker.set(q.metrics || []);
  const dims = [];
  let grain = "";
  for (const g of q.group_by || []) {
    const m = /^metric_time:(\w+)$/.exec(g);
    if (m) grain = m[1];
    else dims.push(g);
  }
  dimensionsPicker.set(dims);
  $("start").value = (q.time_range || {}).start || "";
  $("end").value = (q.time_range || {}).end || "";
  filters.length = 0;
  renderFilters();
  $("where").value = q.where_sql || "";
  if (q.limit !== undefined) $("limit").value = q.limit;
  return onMetricsChange().then(() => {
    if (grain && ![...$("grain").options].some((o) => o.value === grain)) $("grain").appendChild(new Option(grain, grain));
    $("grain").value = grain;
  });
}

function writeHash(q) {
  const hash = "#q=" + encodeURIComponent(JSON.stringify(q));
  if (location.hash !== hash) history.replaceState(null, "", hash);
}

function readHash() {
  const m = /^#q=(.*)$/.exec(location.hash);
  if (!m) return null;
  try { return JSON.parse(decodeURIComponent(m[1])); } catch (e) { return null; }
}

async function run(override) {
  const button = $("run");
  clearError();
  const q = override || buildQuery();
  if (!q.metrics || !q.metrics.length) {
    showError(new Error("pick at least one metric"));
    document.body.dataset.state = "error";
    return;
  }
  writeHash(q);
  button.disabled = true;
  document.body.dataset.state = "running";
  $("status").textContent = "running…";
  const started = performance.now();
  try {
    const result = await api("/v1/query?chart=true&pretty=true", q);
    clearResults();
    renderTable(result);
    $("sql").textContent = result.sql;
    lastQuery = q;
    $("download-csv").disabled = $("download-parquet").disabled = false;
    await renderChart(result.chart);
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

async function download(format, type) {
  if (!lastQuery) return;
  const res = await fetch(`/v1/query?format=${format}`, { method: "POST", headers: headers(type), body: JSON.stringify(lastQuery) });
  if (!res.ok) { showError(Object.assign(new Error(res.statusText), { body: await res.json() })); return; }
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = `dosi-${lastQuery.metrics.join("-")}.${format}`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// -- the catalog: what the chosen metrics allow ------------------------------------------------
async function info(name) {
  if (!metricInfo.has(name)) metricInfo.set(name, await api("/v1/metrics/" + encodeURIComponent(name)));
  return metricInfo.get(name);
}

async function reach(name) {
  if (!reachable.has(name)) {
    const dims = await api("/v1/dimensions?metric=" + encodeURIComponent(name));
    reachable.set(name, new Set(dims.map((d) => d.name)));
  }
  return reachable.get(name);
}

// Grains: those every chosen metric's time axis allows (`time_granularities`); group-bys: the
// fields every chosen metric reaches.
async function onMetricsChange() {
  const names = metricsPicker.values();
  try {
    const infos = await Promise.all(names.map(info));
    const sets = await Promise.all(names.map(reach));
    let grains = names.length ? GRAIN_ORDER.slice() : [];
    for (const m of infos) grains = grains.filter((g) => (m.time_granularities || []).includes(g));
    const sel = $("grain");
    const was = sel.value;
    sel.replaceChildren(new Option("none", ""), ...grains.map((g) => new Option(g, g)));
    sel.value = grains.includes(was) ? was : "";
    const needs = infos.filter((m) => m.requires_time_axis).map((m) => m.name);
    const notes = [];
    if (was && !grains.includes(was)) notes.push(`${was} is not a grain of ${names.join(", ")}`);
    if (names.length && !grains.length) notes.push("no common time axis: group by a dimension");
    if (needs.length) notes.push(`${needs.join(", ")} ${needs.length > 1 ? "need" : "needs"} a time grain`);
    $("grain-note").textContent = notes.join("; ");
    let allowed = null;
    for (const s of sets) allowed = allowed === null ? new Set(s) : new Set([...allowed].filter((d) => s.has(d)));
    dimensionsPicker.allow(allowed);
  } catch (err) {
    showError(err);
  }
}

async function loadCatalog() {
  try {
    const [metrics, dims] = await Promise.all([api("/v1/metrics"), api("/v1/dimensions")]);
    metricsPicker.setItems(metrics.map((m) => ({
      value: m.name,
      tag: m.window_family ? `${m.kind}, ${m.window_family}` : m.kind,
      desc: m.description || "",
    })));
    // metric_time is the grain control; the lists hold stored fields, once each
    const fields = dims.filter((d) => d.name !== "metric_time");
    const usable = fields.filter((d) => d.is_dimension);
    dimensionsPicker.setItems(usable.map((d) => ({
      value: d.name,
      tag: d.is_time ? "time" : (d.datatype || "").toLowerCase(),
      desc: d.description || "",
    })));
    fieldTypes = Object.fromEntries(fields.map((d) => [d.name, d.datatype]));
    $("filter-field").replaceChildren(...fields.map((d) => new Option(d.name, d.name)));
    $("model-info").textContent = `${metrics.length} metrics, ${usable.length} dimensions`;
    const shared = readHash();
    if (shared) {
      await applyQuery(shared);
      document.body.dataset.catalog = "loaded";
      await run(shared);
    } else {
      if (metrics.length) metricsPicker.set([metrics[0].name]);
      await onMetricsChange();
      document.body.dataset.catalog = "loaded";
    }
  } catch (err) {
    $("model-info").textContent = "catalog unavailable";
    showError(err);
  }
}

// -- the filter builder -----------------------------------------------------------------------
// A literal: numbers stay numbers on numeric fields, everything else is a quoted string (the
// server parses and checks the predicate against the model).
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
// a server with a token answers the first catalog load 401: entering the token loads it
$("token").addEventListener("change", () => {
  if (document.body.dataset.catalog !== "loaded") { clearError(); loadCatalog(); }
});
$("run").addEventListener("click", () => run());
$("download-csv").addEventListener("click", () => download("csv", "text/csv"));
$("download-parquet").addEventListener("click", () => download("parquet", "application/vnd.apache.parquet"));
document.addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); run(); }
});
window.addEventListener("hashchange", () => {
  const q = readHash();
  if (q) applyQuery(q).then(() => run(q));
});
loadCatalog();

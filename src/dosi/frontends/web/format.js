// Number formatting for the result table, by the format the server sends for each metric column
// (`formats` of /v1/query?chart=true, the same d3 formats the chart's tooltips use):
//   ",d"    an integer, grouped:                    12,345
//   ",.Nf"  a decimal of scale N, its exact digits:  1,234.50 (a string stays digit for digit)
//   ",.6~r" a double, six significant digits:        -0.324308 (never -0.32430827914865223)
//   ",~f"   whole numbers of an untyped column:      12,345
// Other numbers print as they came. Exported on `window.dosiFormat` (no modules: CSP 'self').
"use strict";

(function () {
  // Group the integer part of a plain decimal string: "-1234567.50" -> "-1,234,567.50".
  function group(text) {
    const m = /^(-?)(\d+)(\.\d+)?$/.exec(text);
    if (!m) return text;
    return m[1] + m[2].replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (m[3] || "");
  }

  // A decimal string or number at `scale` digits, exact: pads with zeros, never rounds a string.
  function fixed(v, scale) {
    let text = typeof v === "string" ? v : v.toFixed(scale);
    if (typeof v === "string" && /^-?\d+(\.\d+)?$/.test(text)) {
      const [whole, frac = ""] = text.split(".");
      text = scale > 0 ? `${whole}.${frac.padEnd(scale, "0")}` : whole;
    }
    return group(text);
  }

  function significant(v, digits) {
    if (typeof v !== "number" || !Number.isFinite(v)) return String(v);
    if (v === 0) return "0";
    const a = Math.abs(v);
    if (a >= 1e15 || a < 1e-6) return Number(v.toPrecision(digits)).toExponential();
    return new Intl.NumberFormat("en-US", { maximumSignificantDigits: digits }).format(v);
  }

  // The text of one value in the table: `fmt` is the column's format or undefined.
  function formatValue(v, fmt) {
    if (v === null || v === undefined) return "NULL";
    if (typeof v === "boolean") return String(v);
    const isNum = typeof v === "number" || (typeof v === "string" && /^-?\d+(\.\d+)?$/.test(v));
    if (!fmt || !isNum) {
      if (typeof v === "number" && !Number.isInteger(v)) return significant(v, 6);
      return typeof v === "object" ? JSON.stringify(v) : String(v);
    }
    if (fmt === ",d") return group(typeof v === "number" ? String(Math.round(v)) : v);
    if (fmt === ",~f") return typeof v === "number" ? significant(v, 15) : group(v);
    const f = /^,\.(\d+)f$/.exec(fmt);
    if (f) return fixed(v, Number(f[1]));
    const r = /^,\.(\d+)~r$/.exec(fmt);
    if (r) return significant(Number(v), Number(r[1]));
    return String(v);
  }

  window.dosiFormat = { formatValue, group };
})();

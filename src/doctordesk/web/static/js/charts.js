// The Chart element (docs/protocol.md#chart): a picture the service drew (an SVG data: URL shown as an <img>, so
// none of it is parsed as HTML and no script of it runs), and the same figure as a table a screen reader reads,
// behind a disclosure. Every text reaches the DOM through textContent; children (the CSV download) go below.

import { node } from "./dom.js";

const PICTURE = /^data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+$/;

function table(props, caption) {
  const t = node("table", "chart-table");
  t.append(node("caption", null, caption));
  const head = node("thead");
  const headRow = node("tr");
  for (const c of Array.isArray(props.columns) ? props.columns : []) {
    const th = node("th", null, c);
    th.scope = "col";
    headRow.append(th);
  }
  head.append(headRow);
  const body = node("tbody");
  for (const cells of Array.isArray(props.rows) ? props.rows : []) {
    const tr = node("tr");
    (Array.isArray(cells) ? cells : []).forEach((cell, i) => {
      const td = node(i === 0 ? "th" : "td", null, cell);
      if (i === 0) td.scope = "row";
      tr.append(td);
    });
    body.append(tr);
  }
  t.append(head, body);
  return t;
}

export function buildChart(model) {
  const props = model.props || {};
  const root = node("figure", "chart");
  const title = node("figcaption", "chart-title", model.label);
  root.append(title);
  const src = typeof model.value === "string" ? model.value : "";
  if (PICTURE.test(src)) {
    const img = document.createElement("img");
    img.src = src;
    img.alt = [model.label, props.description].filter((s) => typeof s === "string" && s).join(": ");
    img.className = "chart-picture";
    root.append(img);
  }
  if (typeof props.description === "string") root.append(node("p", "chart-description", props.description));
  const details = node("details", "chart-details");
  const summary = node("summary", null, props.table_label || model.label);
  const scroll = node("div", "chart-table-scroll");
  scroll.tabIndex = 0; // a wide table scrolls: reachable by keyboard
  scroll.setAttribute("role", "region");
  scroll.setAttribute("aria-label", props.table_label || model.label || "");
  scroll.append(table(props, model.label || ""));
  details.append(summary, scroll);
  const host = node("div", "chart-downloads");
  root.append(details, host);
  return { root, host };
}

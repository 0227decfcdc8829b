// A searchable, keyboard-friendly multi-select: a search box over a listbox of options (name,
// a tag, the description), the picks as removable chips above the list.
//   search box: typing filters by name and description; ↓ moves into the list; Enter picks the
//               first match; Esc clears the search
//   list:       ↓ ↑ Home End move; Space or Enter picks or unpicks; Esc back to the search box
// Options not allowed by the other choices are hidden unless picked (then they say so).
// Exported as `window.dosiPicker(prefix, onChange)` for ids `prefix`, `prefix-search`,
// `prefix-chips`.
"use strict";

(function () {
  function dosiPicker(prefix, onChange) {
    const list = document.getElementById(prefix);
    const search = document.getElementById(prefix + "-search");
    const chips = document.getElementById(prefix + "-chips");
    let items = []; // {value, label, tag, desc, li}
    let picked = []; // values in the order they were picked
    let allowed = null; // Set of values the other choices allow, or null: all

    function visible() {
      return items.filter((it) => !it.li.hidden);
    }

    function render() {
      const q = search.value.trim().toLowerCase();
      for (const it of items) {
        const on = picked.includes(it.value);
        const ok = allowed === null || allowed.has(it.value);
        const match = !q || it.value.toLowerCase().includes(q) || (it.desc || "").toLowerCase().includes(q);
        it.li.hidden = !match || (!ok && !on);
        it.li.setAttribute("aria-selected", on ? "true" : "false");
        it.li.classList.toggle("unavailable", !ok);
        it.note.textContent = ok ? "" : " (not reachable from the chosen metrics)";
      }
      chips.replaceChildren(...picked.map((v) => {
        const li = document.createElement("li");
        li.textContent = v;
        const x = document.createElement("button");
        x.type = "button";
        x.textContent = "×";
        x.title = "remove " + v;
        x.setAttribute("aria-label", "remove " + v);
        x.addEventListener("click", () => toggle(v));
        li.appendChild(x);
        return li;
      }));
    }

    function toggle(value) {
      picked = picked.includes(value) ? picked.filter((v) => v !== value) : [...picked, value];
      render();
      onChange();
    }

    function focusAt(i) {
      const vis = visible();
      if (!vis.length) return;
      const it = vis[Math.max(0, Math.min(vis.length - 1, i))];
      for (const o of items) o.li.tabIndex = -1;
      it.li.tabIndex = 0;
      it.li.focus();
    }

    list.addEventListener("keydown", (ev) => {
      const vis = visible();
      const i = vis.findIndex((it) => it.li === document.activeElement);
      if (ev.key === "ArrowDown") focusAt(i + 1);
      else if (ev.key === "ArrowUp") { if (i <= 0) search.focus(); else focusAt(i - 1); }
      else if (ev.key === "Home") focusAt(0);
      else if (ev.key === "End") focusAt(vis.length - 1);
      else if ((ev.key === " " || ev.key === "Enter") && i >= 0 && !ev.ctrlKey && !ev.metaKey) toggle(vis[i].value);
      else if (ev.key === "Escape") search.focus();
      else return;
      ev.preventDefault();
    });
    search.addEventListener("input", render);
    search.addEventListener("keydown", (ev) => {
      if (ev.key === "ArrowDown") focusAt(0);
      else if (ev.key === "Enter" && !ev.ctrlKey && !ev.metaKey) {
        const vis = visible();
        if (!vis.length) return;
        toggle(vis[0].value);
        search.value = "";
        render();
      } else if (ev.key === "Escape") { search.value = ""; render(); }
      else return;
      ev.preventDefault();
    });

    return {
      setItems(list_) {
        items = list_.map((d) => {
          const li = document.createElement("li");
          li.className = "opt";
          li.setAttribute("role", "option");
          li.tabIndex = -1;
          li.dataset.value = d.value;
          const box = document.createElement("span");
          box.className = "box";
          box.setAttribute("aria-hidden", "true");
          const name = document.createElement("span");
          name.className = "name";
          name.textContent = d.value;
          const note = document.createElement("span");
          note.className = "tag";
          if (d.tag) {
            const tag = document.createElement("span");
            tag.className = "tag";
            tag.textContent = d.tag;
            name.appendChild(tag);
          }
          name.appendChild(note);
          li.append(box, name);
          if (d.desc) {
            const desc = document.createElement("span");
            desc.className = "desc";
            desc.textContent = d.desc;
            li.appendChild(desc);
          }
          li.title = d.desc || d.value;
          li.addEventListener("click", () => { toggle(d.value); focusAt(visible().findIndex((it) => it.li === li)); });
          return { ...d, li, note };
        });
        if (items.length) items[0].li.tabIndex = 0;
        list.replaceChildren(...items.map((it) => it.li));
        picked = picked.filter((v) => items.some((it) => it.value === v));
        render();
      },
      values() { return [...picked]; },
      set(values) { picked = values.filter((v) => items.some((it) => it.value === v)); render(); },
      allow(set) { allowed = set; render(); },
    };
  }

  window.dosiPicker = dosiPicker;
})();

// The span task (SHREC): select text in the transcript, label it a social error or competency,
// tag its social attributes, explain it, and for an error say what should have happened instead.
//
// The finished spans live as JSON in the hidden input the form posts (spans-<key>); every change
// fires "change" on it, so htmx autosaves. A span is anchored by turn indexes (data-turn) and, when
// it does not cover whole turns, by character offsets into the first and last turn's text, counted
// in Unicode code points as Python counts them. Highlights use the CSS Custom Highlight API, which
// leaves the transcript's text nodes untouched; badges E1 / C2 beside each turn say the same
// without colour. Half-written spans cannot be stored as rows yet, so the editor keeps them in
// localStorage until they are added.
const task = document.querySelector("[data-span-task]");
const source = document.querySelector("[data-span-source]");

if (task && source) {
  const input = task.querySelector("[data-spans-input]");
  const list = task.querySelector("[data-span-list]");
  const empty = task.querySelector("[data-span-empty]");
  const editor = task.querySelector("[data-span-editor]");
  const readOnly = task.hasAttribute("data-readonly");
  const names = new Map(
    [...task.querySelector("[data-span-attribute-names]").content.querySelectorAll("[data-key]")].map((element) => [
      element.dataset.key,
      element.textContent,
    ]),
  );
  const contents = new Map(
    [...source.querySelectorAll("[data-turn]")]
      .map((turn) => [Number(turn.dataset.turn), turn.querySelector("[data-turn-content]")])
      .filter(([, content]) => content),
  );
  const LABELS = { error: "Social error", competency: "Social competency" };
  const LETTERS = { error: "E", competency: "C" };

  let spans = [];
  try {
    spans = JSON.parse(input.value || "[]");
  } catch {
    spans = [];
  }
  let pending = null; // the anchor being marked: {start_turn, end_turn, start_char, end_char}
  let editing = -1; // index of the span being edited, or -1 for a new one
  let focused = -1; // span under the pointer or focus in the list

  // Offsets: the DOM counts UTF-16 units, Python counts code points.
  const textOf = (element) => element.textContent;
  const codePoints = (text, units) => [...text.slice(0, units)].length;
  const units = (text, points) => [...text].slice(0, points).join("").length;
  const turnLabel = (span) =>
    span.start_turn === span.end_turn ? `turn ${span.start_turn + 1}` : `turns ${span.start_turn + 1}–${span.end_turn + 1}`;

  function offsetIn(element, container, offset) {
    const range = document.createRange();
    range.selectNodeContents(element);
    range.setEnd(container, offset);
    return range.toString().length;
  }

  // The current selection as an anchor, or null when it touches no turn text.
  function anchorFromSelection() {
    const selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
    const range = selection.getRangeAt(0);
    const hit = [...contents].filter(([, element]) => range.intersectsNode(element));
    if (!hit.length) return null;
    const edges = hit.map(([turn, element]) => {
      const text = textOf(element);
      const from = element.contains(range.startContainer) ? offsetIn(element, range.startContainer, range.startOffset) : 0;
      const to = element.contains(range.endContainer) ? offsetIn(element, range.endContainer, range.endOffset) : text.length;
      return { turn, text, from, to };
    });
    // A selection that only grazes the edge of a turn does not include it.
    const kept = edges.filter((edge) => edge.to > edge.from);
    if (!kept.length) return null;
    const first = kept[0];
    const last = kept[kept.length - 1];
    const anchor = {
      start_turn: first.turn,
      end_turn: last.turn,
      start_char: codePoints(first.text, first.from),
      end_char: codePoints(last.text, last.to),
    };
    if (anchor.start_char === 0 && anchor.end_char === [...last.text].length) {
      anchor.start_char = null; // whole turns
      anchor.end_char = null;
    }
    return anchor;
  }

  function rangesFor(span) {
    const ranges = [];
    for (let turn = span.start_turn; turn <= span.end_turn; turn += 1) {
      const element = contents.get(turn);
      if (!element || !element.firstChild) continue;
      const text = textOf(element);
      const from = turn === span.start_turn && span.start_char != null ? units(text, span.start_char) : 0;
      const to = turn === span.end_turn && span.end_char != null ? units(text, span.end_char) : text.length;
      if (to <= from) continue;
      const range = document.createRange();
      range.setStart(element.firstChild, from);
      range.setEnd(element.firstChild, to);
      ranges.push(range);
    }
    return ranges;
  }

  const quote = (span) => {
    const text = rangesFor(span)
      .map((range) => range.toString())
      .join(" … ");
    return text.length > 160 ? `${text.slice(0, 157)}…` : text;
  };

  function paint() {
    if ("highlights" in CSS) {
      const byLabel = { error: [], competency: [] };
      spans.forEach((span) => byLabel[span.label]?.push(...rangesFor(span)));
      CSS.highlights.set("parley-error", new Highlight(...byLabel.error));
      CSS.highlights.set("parley-competency", new Highlight(...byLabel.competency));
      CSS.highlights.set("parley-pending", new Highlight(...(pending ? rangesFor(pending) : [])));
      CSS.highlights.set("parley-focus", new Highlight(...(focused >= 0 && spans[focused] ? rangesFor(spans[focused]) : [])));
    }
    for (const badges of source.querySelectorAll("[data-turn-badges]")) badges.replaceChildren();
    spans.forEach((span, index) => {
      for (let turn = span.start_turn; turn <= span.end_turn; turn += 1) {
        const badges = source.querySelector(`[data-turn="${turn}"] [data-turn-badges]`);
        if (!badges) continue;
        const badge = document.createElement("span");
        badge.className = `span-badge span-badge--${span.label}`;
        badge.textContent = `${LETTERS[span.label]}${index + 1}`;
        badge.title = `${LABELS[span.label]} ${index + 1}`;
        badges.append(badge);
      }
    });
  }

  function renderList() {
    list.replaceChildren();
    empty.hidden = spans.length > 0;
    spans.forEach((span, index) => {
      const item = document.createElement("li");
      item.className = `span-item span-item--${span.label}`;
      item.tabIndex = -1;
      item.dataset.index = String(index);
      const head = document.createElement("p");
      head.className = "span-item__head";
      const badge = document.createElement("span");
      badge.className = `span-badge span-badge--${span.label}`;
      badge.textContent = `${LETTERS[span.label]}${index + 1}`;
      const title = document.createElement("strong");
      title.textContent = ` ${LABELS[span.label] || span.label}`;
      head.append(badge, title, ` · ${turnLabel(span)}`);
      const said = document.createElement("blockquote");
      said.className = "span-item__quote";
      said.textContent = quote(span);
      item.append(head, said);
      const details = [
        ["Attributes", (span.attributes || []).map((key) => names.get(key) || key).join(", ") || "none chosen"],
        ["Why", span.rationale],
      ];
      if (span.label === "error" || span.correction) details.push(["Instead", span.correction || "—"]);
      const definitions = document.createElement("dl");
      definitions.className = "span-item__details";
      for (const [term, text] of details) {
        const dt = document.createElement("dt");
        dt.textContent = term;
        const dd = document.createElement("dd");
        dd.textContent = text;
        definitions.append(dt, dd);
      }
      item.append(definitions);
      if (!readOnly) {
        const actions = document.createElement("p");
        actions.className = "span-item__actions";
        for (const [action, text] of [
          ["edit", "Edit"],
          ["delete", "Delete"],
        ]) {
          const button = document.createElement("button");
          button.type = "button";
          button.className = "button button--quiet button--small";
          button.dataset.spanAction = action;
          button.textContent = text;
          const hidden = document.createElement("span");
          hidden.className = "visually-hidden";
          hidden.textContent = ` ${LETTERS[span.label]}${index + 1}`;
          button.append(hidden);
          actions.append(button);
        }
        item.append(actions);
      }
      list.append(item);
    });
  }

  function store() {
    input.value = JSON.stringify(spans);
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  renderList();
  paint();

  list.addEventListener("pointerover", (event) => focusSpan(event.target.closest?.(".span-item")));
  list.addEventListener("focusin", (event) => focusSpan(event.target.closest?.(".span-item")));
  list.addEventListener("pointerleave", () => focusSpan(null));
  list.addEventListener("focusout", (event) => {
    if (!list.contains(event.relatedTarget)) focusSpan(null);
  });
  function focusSpan(item) {
    const index = item ? Number(item.dataset.index) : -1;
    if (index !== focused) {
      focused = index;
      paint();
    }
  }

  if (editor && !readOnly) {
    const field = (name) => editor.querySelector(`[data-span-${name}]`);
    const selectionNote = field("selection");
    const problem = field("problem");
    const saveButton = field("save");
    const title = editor.querySelector("[data-span-editor-title]");
    const storageKey = editor.dataset.storageKey;
    const hint = selectionNote.textContent;

    const labelChoice = () => editor.querySelector("[data-span-label]:checked")?.value || "";
    const chosenAttributes = () => [...editor.querySelectorAll("[data-span-attribute]:checked")].map((box) => box.value);

    function showSelection() {
      if (!pending) {
        selectionNote.textContent = hint;
        return;
      }
      selectionNote.textContent = `Marking ${turnLabel(pending)}: “${quote(pending)}”`;
    }

    function updateCorrectionNote() {
      field("correction-note").hidden = labelChoice() === "competency";
    }

    function stash() {
      try {
        const state = {
          pending,
          editing,
          label: labelChoice(),
          attributes: chosenAttributes(),
          rationale: field("rationale").value,
          correction: field("correction").value,
        };
        const blank = !state.pending && !state.label && !state.attributes.length && !state.rationale && !state.correction;
        if (blank) localStorage.removeItem(storageKey);
        else localStorage.setItem(storageKey, JSON.stringify(state));
      } catch {
        // Storage may be off (private mode); the editor still works.
      }
    }

    function fill(state) {
      pending = state.pending || null;
      editing = Number.isInteger(state.editing) && state.editing < spans.length ? state.editing : -1;
      for (const radio of editor.querySelectorAll("[data-span-label]")) radio.checked = radio.value === state.label;
      for (const box of editor.querySelectorAll("[data-span-attribute]")) box.checked = (state.attributes || []).includes(box.value);
      field("rationale").value = state.rationale || "";
      field("correction").value = state.correction || "";
      title.textContent = editing >= 0 ? `Edit span ${LETTERS[spans[editing].label]}${editing + 1}` : "Mark a span";
      saveButton.textContent = editing >= 0 ? "Save changes" : "Add span";
      problem.hidden = true;
      updateCorrectionNote();
      showSelection();
      paint();
    }

    function reset() {
      fill({});
      try {
        localStorage.removeItem(storageKey);
      } catch {
        // ignore
      }
    }

    function check(span) {
      const missing = [];
      if (!span.start_turn && span.start_turn !== 0) missing.push("select the words or turns in the transcript");
      if (!span.label) missing.push("say whether it is an error or a competency");
      if (!span.attributes.length) missing.push("tick at least one social attribute");
      if (!span.rationale.trim()) missing.push("say why you marked it");
      if (span.label === "error" && !span.correction.trim()) missing.push("write what the agent should have done instead");
      return missing;
    }

    // Each attribute's definition, shown under the list while it is pointed at or focused.
    const help = editor.querySelector("[data-attribute-help]");
    const explain = (event) => {
      const option = event.target.closest?.(".attribute-option");
      if (!option || !help) return;
      const strong = document.createElement("strong");
      strong.textContent = `${option.querySelector("label").textContent.trim()}: `;
      help.replaceChildren(strong, option.querySelector(".attribute-option__definition").textContent);
    };
    editor.addEventListener("pointerover", explain);
    editor.addEventListener("focusin", explain);

    // Keep the editor's own typing out of the autosave: only finished spans are posted.
    for (const type of ["input", "change"]) {
      editor.addEventListener(type, (event) => {
        event.stopPropagation();
        if (event.target.matches("[data-span-label]")) updateCorrectionNote();
        stash();
      });
    }

    document.addEventListener("selectionchange", () => {
      const anchor = anchorFromSelection();
      if (!anchor) return;
      pending = anchor;
      showSelection();
      stash();
    });
    source.addEventListener("pointerup", () => {
      if (pending) paint();
    });
    source.addEventListener("keyup", () => {
      if (pending) paint();
    });

    saveButton.addEventListener("click", () => {
      const base = editing >= 0 ? spans[editing] : {};
      const anchor = pending || (editing >= 0 ? base : null);
      const span = {
        label: labelChoice(),
        start_turn: anchor?.start_turn,
        end_turn: anchor?.end_turn,
        start_char: anchor?.start_char ?? null,
        end_char: anchor?.end_char ?? null,
        attributes: chosenAttributes(),
        rationale: field("rationale").value,
        correction: field("correction").value,
      };
      const missing = check(span);
      if (missing.length) {
        problem.textContent = `To add this span, ${missing.join("; ")}.`;
        problem.hidden = false;
        return;
      }
      if (editing >= 0) spans[editing] = span;
      else spans.push(span);
      const added = editing >= 0 ? editing : spans.length - 1;
      window.getSelection()?.removeAllRanges();
      reset();
      store();
      renderList();
      paint();
      list.querySelector(`[data-index="${added}"]`)?.focus({ preventScroll: true });
    });

    field("cancel").addEventListener("click", () => {
      window.getSelection()?.removeAllRanges();
      reset();
    });

    list.addEventListener("click", (event) => {
      const button = event.target.closest("[data-span-action]");
      if (!button) return;
      const index = Number(button.closest(".span-item").dataset.index);
      if (button.dataset.spanAction === "delete") {
        spans.splice(index, 1);
        if (editing === index) reset();
        else if (editing > index) editing -= 1;
        focused = -1;
        store();
        renderList();
        paint();
        (list.querySelector(`[data-index="${Math.min(index, spans.length - 1)}"]`) || task).focus?.({ preventScroll: true });
        return;
      }
      const span = spans[index];
      fill({
        pending: { start_turn: span.start_turn, end_turn: span.end_turn, start_char: span.start_char, end_char: span.end_char },
        editing: index,
        label: span.label,
        attributes: span.attributes,
        rationale: span.rationale,
        correction: span.correction,
      });
      stash();
      editor.scrollIntoView({ block: "nearest" });
      editor.querySelector("[data-span-label]:checked")?.focus({ preventScroll: true });
    });

    // Bring back a span that was half written when the page was left.
    try {
      const saved = JSON.parse(localStorage.getItem(storageKey) || "null");
      if (saved) fill(saved);
    } catch {
      // ignore
    }
    updateCorrectionNote();
  }
}

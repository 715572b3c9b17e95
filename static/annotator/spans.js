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
//
// A selection snaps to whole words (runs of non-space characters). With a recording on the page a
// span may instead be marked by time: "Start here" / "End here" take the player's current time,
// the number inputs adjust it, and the span covers the turns spoken in that stretch (turn_times.js;
// the server works them out again). Every span names the seat it is about and its channel.
import { clock, timedTurns, turnsOverlapping } from "./turn_times.js";

const task = document.querySelector("[data-span-task]");
const source = document.querySelector("[data-span-source]");

if (task && source) {
  const input = task.querySelector("[data-spans-input]");
  const list = task.querySelector("[data-span-list]");
  const empty = task.querySelector("[data-span-empty]");
  const editor = task.querySelector("[data-span-editor]");
  const readOnly = task.hasAttribute("data-readonly");
  const namesIn = (selector) =>
    new Map([...(task.querySelector(selector)?.content.querySelectorAll("[data-key]") || [])].map((element) => [element.dataset.key, element.textContent]));
  const names = namesIn("[data-span-attribute-names]");
  const seatNames = namesIn("[data-span-seat-names]");
  const CHANNELS = { verbal: "verbal", "non-verbal": "non-verbal", both: "verbal and non-verbal" };
  const turnTimes = timedTurns(source);
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
  const turnsOnly = (span) =>
    span.start_turn === span.end_turn ? `turn ${span.start_turn + 1}` : `turns ${span.start_turn + 1}–${span.end_turn + 1}`;
  const turnLabel = (span) =>
    span.start_s != null ? `${clock(span.start_s)}–${clock(span.end_s)} (${turnsOnly(span)})` : turnsOnly(span);

  // Widen [from, to) in text to whole words (letters, digits, apostrophes and hyphens inside a word),
  // without the spaces at either end: "ea, le" in "Great, let's" becomes "Great, let's".
  function snap(text, from, to) {
    const wordy = (at) => at >= 0 && at < text.length && /[\p{L}\p{N}\p{M}'’_-]/u.test(text[at]);
    const space = (at) => /\s/.test(text[at]);
    while (from > 0 && wordy(from - 1) && wordy(from)) from -= 1;
    while (to < text.length && wordy(to - 1) && wordy(to)) to += 1;
    while (from < to && space(from)) from += 1;
    while (to > from && space(to - 1)) to -= 1;
    return [from, to];
  }

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
    [first.from, first.to] = snap(first.text, first.from, first === last ? first.to : first.text.length);
    if (last !== first) [last.from, last.to] = snap(last.text, 0, last.to);
    if (first.to <= first.from && first === last) return null;
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
      if (seatNames.size > 1 && span.seat != null) details.unshift(["About", seatNames.get(String(span.seat)) || `seat ${span.seat + 1}`]);
      if (span.channel) details.push(["Shown through", CHANNELS[span.channel] || span.channel]);
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

    const needRationale = editor.hasAttribute("data-need-rationale");
    const media = document.querySelector("[data-player] [data-player-media]");
    const startInput = field("start");
    const endInput = field("end");
    const seatInput = field("seat");
    const defaultSeat = () => {
      const chosen = seatInput?.querySelector?.("[data-default]")?.value ?? seatInput?.value;
      return chosen === undefined || chosen === "" ? null : Number(chosen);
    };
    const seatChoice = () => (seatInput && seatInput.value !== "" ? Number(seatInput.value) : null);
    const channelChoice = () => editor.querySelector("[data-span-channel]:checked")?.value || "";
    const labelChoice = () => editor.querySelector("[data-span-label]:checked")?.value || "";
    const seconds = (input) => (input && input.value.trim() !== "" && Number.isFinite(Number(input.value)) ? Math.round(Number(input.value) * 10) / 10 : null);

    // The stretch in the time inputs as the pending anchor: the turns it covers, no character offsets.
    function anchorFromTimes() {
      const first = seconds(startInput);
      if (first === null) return null;
      const last = Math.max(first, seconds(endInput) ?? first);
      const covered = turnsOverlapping(turnTimes, first, last);
      if (!covered) return { start_turn: pending?.start_turn, end_turn: pending?.end_turn, start_char: null, end_char: null, start_s: first, end_s: last };
      return { start_turn: covered[0], end_turn: covered[1], start_char: null, end_char: null, start_s: first, end_s: last };
    }
    function markByTime() {
      pending = anchorFromTimes();
      window.getSelection()?.removeAllRanges();
      showSelection();
      stash();
      paint();
    }
    const playerTime = () => Math.round((media?.currentTime || 0) * 10) / 10;
    field("start-here")?.addEventListener("click", () => {
      startInput.value = playerTime().toFixed(1);
      if (seconds(endInput) !== null && seconds(endInput) < seconds(startInput)) endInput.value = startInput.value;
      markByTime();
    });
    field("end-here")?.addEventListener("click", () => {
      endInput.value = playerTime().toFixed(1);
      if (seconds(startInput) === null || seconds(startInput) > seconds(endInput)) startInput.value = endInput.value;
      markByTime();
    });
    for (const input of [startInput, endInput]) input?.addEventListener("input", markByTime);
    const chosenAttributes = () => [...editor.querySelectorAll("[data-span-attribute]:checked")].map((box) => box.value);

    function showSelection() {
      if (!pending) {
        selectionNote.textContent = hint;
        return;
      }
      selectionNote.textContent = pending.start_turn == null ? `Marking ${clock(pending.start_s)}–${clock(pending.end_s)}` : `Marking ${turnLabel(pending)}: “${quote(pending)}”`;
    }

    function updateCorrectionNote() {
      const note = field("correction-note");
      if (note) note.hidden = labelChoice() === "competency";
    }

    function stash() {
      try {
        const state = {
          pending,
          editing,
          label: labelChoice(),
          seat: seatChoice(),
          channel: channelChoice(),
          attributes: chosenAttributes(),
          rationale: field("rationale").value,
          correction: field("correction").value,
        };
        const blank = !state.pending && !state.label && !state.channel && !state.attributes.length && !state.rationale && !state.correction;
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
      for (const radio of editor.querySelectorAll("[data-span-channel]")) radio.checked = radio.value === state.channel;
      if (seatInput) seatInput.value = String(state.seat ?? defaultSeat() ?? "");
      if (startInput) startInput.value = pending?.start_s != null ? pending.start_s.toFixed(1) : "";
      if (endInput) endInput.value = pending?.end_s != null ? pending.end_s.toFixed(1) : "";
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
      if (!span.start_turn && span.start_turn !== 0) {
        missing.push(span.start_s != null ? "select the turns too (this recording's turns have no times)" : "select the words or turns in the transcript");
      }
      if (!span.label) missing.push("say whether it is an error or a competency");
      if (!span.attributes.length) missing.push("tick at least one social attribute");
      if (needRationale && !span.rationale.trim()) missing.push("say why you marked it");
      if (needRationale && span.label === "error" && !span.correction.trim()) missing.push("write what the agent should have done instead");
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
      if (pending?.start_s != null && turnTimes.length) {
        // A selection replaces a stretch marked by time.
        startInput.value = "";
        endInput.value = "";
      }
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
        start_s: anchor?.start_s ?? null,
        end_s: anchor?.end_s ?? null,
        seat: seatChoice(),
        channel: channelChoice(),
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
        pending: {
          start_turn: span.start_turn,
          end_turn: span.end_turn,
          start_char: span.start_char,
          end_char: span.end_char,
          start_s: span.start_s ?? null,
          end_s: span.end_s ?? null,
        },
        editing: index,
        label: span.label,
        seat: span.seat,
        channel: span.channel,
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

// Keyboard shortcuts on the item page: digits pick an answer in the current question, j / k move
// between questions, n submits and opens the next item, ? shows the list. Off while typing.
const area = document.getElementById("annotation-form");
const form = area instanceof HTMLFormElement ? area : null;
const dialog = document.getElementById("shortcut-help");
let current = null;

const questions = () => (area ? [...area.querySelectorAll("[data-question]")] : []);

const isTyping = (element) =>
  element.isContentEditable ||
  element.tagName === "TEXTAREA" ||
  element.tagName === "SELECT" ||
  (element.tagName === "INPUT" && !["radio", "checkbox", "range", "button", "submit"].includes(element.type));

function markCurrent(question) {
  current = question;
  for (const element of questions()) element.classList.toggle("question--current", element === question);
}

function moveTo(question) {
  if (!question) return;
  markCurrent(question);
  const target =
    question.querySelector("input[type=radio]:checked:not(:disabled)") ||
    question.querySelector("input:not([type=hidden]):not(:disabled), textarea:not(:disabled)");
  if (target) target.focus({ preventScroll: true });
  question.scrollIntoView({ block: "nearest" });
}

function toggleHelp() {
  if (!dialog) return;
  if (dialog.open) dialog.close();
  else dialog.showModal();
}

document.addEventListener("focusin", (event) => {
  const question = event.target.closest?.("[data-question]");
  if (question && area?.contains(question)) markCurrent(question);
});

for (const button of document.querySelectorAll("[data-shortcut-help]")) button.addEventListener("click", toggleHelp);

document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
  if (event.key === "?") {
    event.preventDefault();
    toggleHelp();
    return;
  }
  if (dialog?.open) return;
  const all = questions();
  const position = all.indexOf(current);
  if (event.key === "j" || event.key === "k") {
    event.preventDefault();
    const step = event.key === "j" ? 1 : -1;
    moveTo(all[Math.min(all.length - 1, Math.max(0, position === -1 ? 0 : position + step))]);
  } else if (/^[1-9]$/.test(event.key)) {
    const question = current || all[0];
    const radio = question?.querySelector(`input[type=radio][data-shortcut="${event.key}"]:not(:disabled)`);
    if (!radio) return;
    event.preventDefault();
    markCurrent(question);
    radio.click(); // fires input and change, so the answer autosaves
    radio.focus({ preventScroll: true });
  } else if (event.key === "n" && form) {
    event.preventDefault();
    form.requestSubmit();
  }
});

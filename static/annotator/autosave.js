// Autosave for the annotation form: htmx posts the draft (see the hx-* attributes on the form);
// this module adds what htmx cannot know: the saved / not saved state, time on the page, slider
// values, a save when the tab is hidden or closed, a submit that waits for the last save, and the
// two things that keep typing safe across a reload (annotator/drafts.py says the server's side):
// - every save names this browser tab and is numbered, so a late save from the tab's previous page
//   never conflicts with the page now open, and an older one never overwrites a newer one;
// - what is typed is copied into the tab's session storage until a save of it is confirmed; a page
//   that finds such a copy its server state lacks sends it again and reloads, or says it was not saved.
const form = document.querySelector("form[data-autosave]");

// Storage can be full or switched off; then the server's copy is all there is.
const safely = (work, otherwise = null) => {
  try {
    return work();
  } catch {
    return otherwise;
  }
};
const read = (storage, key) => safely(() => JSON.parse(window[storage].getItem(key)));
const write = (storage, key, value) => safely(() => window[storage].setItem(key, JSON.stringify(value)));
const forget = (storage, key) => safely(() => window[storage].removeItem(key));

// This tab's id lives in its session storage, which survives reloads. A duplicated tab starts with
// a copy of that storage, so a page that finds its id already shown by a live page takes a new one.
const randomId = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, "0")).join("");
const tabId = () => {
  let id = read("sessionStorage", "parley:tab");
  if (!id || read("localStorage", `parley:tab-open:${id}`)) {
    id = randomId();
    write("sessionStorage", "parley:tab", id);
  }
  write("localStorage", `parley:tab-open:${id}`, true);
  return id;
};
// Saves are numbered across every tab of the browser, in the order they are sent.
let lastSave = 0;
const nextSave = () => {
  lastSave = Math.max(lastSave, Number(read("localStorage", "parley:tab-saves")) || 0) + 1;
  write("localStorage", "parley:tab-saves", lastSave);
  return lastSave;
};

if (form) {
  const status = () => document.getElementById("save-status");
  const seconds = form.querySelector("#seconds");
  const tab = tabId();
  form.querySelector("#tab").value = tab;
  const copyKey = `parley:draft:${form.dataset.draftKey}`;
  let changes = 0; // edits made on this page
  let savedChanges = 0; // edits covered by the last successful save
  let sentChanges = 0; // edits covered by the request in flight
  let sentSeconds = 0; // seconds reported by the request in flight
  let inFlight = false;
  let lastInput = 0;
  let conflict = false;
  let restoring = false;
  let discarding = false;
  let retryTimer = null;

  const setStatus = (state, text) => {
    const element = status();
    if (!element || conflict) return;
    element.dataset.state = state;
    element.className = `save-status save-status--${state === "saving" ? "pending" : state}`;
    element.textContent = text;
  };
  const dirty = () => changes > savedChanges;

  // The copy of what is typed: the answers, the revision they build on, and the number of a save
  // already sent with them (a beacon or a submit), if any.
  const sender = new Set(["csrfmiddlewaretoken", "revision", "seconds", "tab", "tab_save"]);
  const keepCopy = (sent = null) => write("sessionStorage", copyKey, {
    tab,
    revision: Number(form.querySelector("#revision")?.value || 0),
    entries: Array.from(new FormData(form)).filter(([name]) => !sender.has(name)),
    sent,
  });

  // A slider has no "unanswered" state, so its value travels in a hidden input set on first touch.
  // Touching a slider where it already sits (its start, often the most common answer) fires no
  // event, so each unset slider also has a "Set to N" button that sets whatever value it shows.
  const setSlider = (range) => {
    const hidden = form.querySelector(`input[type=hidden][name="${range.dataset.sliderFor}"]`);
    hidden.value = range.value;
    const slider = range.closest("[data-slider]");
    slider.classList.remove("slider--unset");
    slider.parentElement.querySelector("[data-slider-output]").textContent = range.value;
    const button = form.querySelector(`[data-slider-set="${range.dataset.sliderFor}"]`);
    if (button) button.hidden = true;
  };
  // Capture phase: the hidden input is up to date before htmx reads the form for this event.
  form.addEventListener(
    "input",
    (event) => {
      const range = event.target.closest?.("[data-slider-for]");
      if (range) setSlider(range);
    },
    true,
  );
  form.addEventListener("click", (event) => {
    const button = event.target.closest?.("[data-slider-set]");
    if (!button) return;
    const range = form.querySelector(`[data-slider-for="${button.dataset.sliderSet}"]`);
    setSlider(range);
    range.focus();
    // A change event that bubbles to the form: it counts as an edit and triggers the autosave.
    range.dispatchEvent(new Event("change", { bubbles: true }));
  });

  const noteChange = () => {
    changes += 1;
    lastInput = Date.now();
    keepCopy();
    setStatus("pending", "Not saved yet…");
  };
  form.addEventListener("input", noteChange);
  form.addEventListener("change", noteChange);
  // Inputs outside the form that belong to it (form="annotation-form": the ratings beside each
  // turn of the transcript) do not bubble to it: their edits are passed on, a change at once (it
  // triggers the save) and typing after the same pause as the form's own.
  let typingTimer = null;
  const outside = (event) => event.target?.form === form && !form.contains(event.target);
  document.addEventListener("change", (event) => {
    if (outside(event)) form.dispatchEvent(new Event("change", { bubbles: true }));
  });
  document.addEventListener("input", (event) => {
    if (!outside(event)) return;
    noteChange();
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => window.htmx?.trigger(form, "parley:save"), 800);
  });

  // Time on the page: counted only while the tab is visible, sent with each save.
  setInterval(() => {
    if (document.visibilityState === "visible") seconds.value = String(Number(seconds.value) + 1);
  }, 1000);

  form.addEventListener("htmx:configRequest", (event) => {
    event.detail.parameters.tab_save = String(nextSave());
  });
  form.addEventListener("htmx:beforeRequest", (event) => {
    if (conflict || restoring) {
      event.preventDefault();
      return;
    }
    inFlight = true;
    sentChanges = changes;
    sentSeconds = Number(seconds.value); // the form values were read just before this event
    setStatus("saving", "Saving…");
  });
  // A conflict (409) or a warning comes with a message to show: swap it in like a success.
  form.addEventListener("htmx:beforeSwap", (event) => {
    if (event.detail.xhr.status === 409) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
  form.addEventListener("htmx:afterRequest", (event) => {
    inFlight = false;
    const xhr = event.detail.xhr;
    if (event.detail.successful && xhr.status === 200) {
      savedChanges = sentChanges;
      seconds.value = String(Math.max(0, Number(seconds.value) - sentSeconds));
      if (dirty()) {
        keepCopy(); // on the revision the save made
        setStatus("pending", "Not saved yet…");
      } else {
        forget("sessionStorage", copyKey);
      }
    } else if (xhr.status === 409) {
      conflict = true;
      form.dataset.conflict = "true";
    } else {
      // Offline or a server error: keep the edits and try again shortly.
      setStatus("error", "Not saved — the connection failed. Retrying… keep this tab open.");
      clearTimeout(retryTimer);
      retryTimer = setTimeout(() => window.htmx?.trigger(form, "parley:save"), 5000);
    }
  });
  window.addEventListener("online", () => dirty() && window.htmx?.trigger(form, "parley:save"));

  // Leaving the tab: save now (the page stays alive). Unloading it (a reload, a link, closing): send
  // what is unsaved as a beacon, with the seconds spent since the last save, and note its number in
  // the copy. A page that comes back from the back-forward cache may be behind: reload it.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden" && dirty() && !inFlight) window.htmx?.trigger(form, "parley:save");
  });
  window.addEventListener("pagehide", () => {
    forget("localStorage", `parley:tab-open:${tab}`);
    if (conflict || restoring || discarding || form.dataset.submitting) return;
    if (!dirty() && Number(seconds.value) < 5) return;
    const number = nextSave();
    const body = new FormData(form);
    body.set("tab_save", String(number));
    const sent = navigator.sendBeacon(form.dataset.draftUrl, body);
    if (dirty()) keepCopy(sent ? number : null);
  });
  // Cancelling an edit throws its draft away: this tab's copy of it goes too, and nothing is sent.
  document.addEventListener("submit", (event) => {
    if (!event.target.matches?.("form[data-discards-draft]")) return;
    discarding = true;
    forget("sessionStorage", copyKey);
  });
  window.addEventListener("pageshow", (event) => {
    if (event.persisted) window.location.reload();
  });

  // "Saved at" in the annotator's own time zone (the server writes it in its own).
  const localTime = () => {
    const time = status()?.querySelector("time[datetime]");
    if (time) time.textContent = new Date(time.dateTime).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  };
  localTime();
  form.addEventListener("htmx:afterSettle", localTime);

  // Submitting waits until the last autosave is back, so it carries the newest revision.
  form.addEventListener("submit", (event) => {
    if (form.dataset.submitting) return;
    event.preventDefault();
    if (restoring) return;
    form.dataset.submitting = "true";
    setStatus("saving", "Submitting…");
    const go = () => {
      if (inFlight || Date.now() - lastInput < 900) {
        setTimeout(go, 100);
        return;
      }
      const number = nextSave();
      form.querySelector("#tab-save").value = String(number);
      keepCopy(number); // a submit that fails keeps these answers as the draft, numbered so
      form.submit();
    };
    go();
  });

  // What this tab typed before the page was loaded and the server may not have: the server has it
  // when its stored save is this tab's, numbered at or after the save that carried the copy.
  const restore = (copy) => {
    restoring = true;
    form.inert = true;
    setStatus("saving", "Saving what you typed before the page reloaded…");
    const body = new FormData();
    body.set("csrfmiddlewaretoken", form.elements.csrfmiddlewaretoken.value);
    for (const [name, value] of copy.entries) body.append(name, value);
    body.set("revision", String(copy.revision));
    body.set("seconds", "0");
    body.set("tab", tab);
    body.set("tab_save", String(nextSave()));
    fetch(form.dataset.draftUrl, { method: "POST", body, credentials: "same-origin" })
      .then((response) => {
        if (response.ok) {
          forget("sessionStorage", copyKey);
          window.location.reload();
        } else if (response.status === 409) {
          forget("sessionStorage", copyKey);
          restoring = false;
          form.inert = false;
          showUnsaved(copy);
        } else {
          throw new Error(String(response.status));
        }
      })
      .catch(() => {
        setStatus("error", "What you typed before the page reloaded is not saved yet: the connection failed. It is kept in this tab: reload the page to try again.");
      });
  };
  // Said plainly, with the text typed, so it can be copied into the answers shown.
  const showUnsaved = (copy) => {
    const notice = document.createElement("div");
    notice.className = "panel notice";
    notice.setAttribute("role", "alert");
    notice.id = "unsaved-typing";
    const message = document.createElement("p");
    message.textContent = "What you typed just before the page reloaded was not saved: this item was saved from another tab or window since. The answers below are the ones stored.";
    notice.append(message);
    for (const [name, value] of copy.entries) {
      if (!value || form.elements[name]?.tagName !== "TEXTAREA") continue;
      const typed = document.createElement("p");
      typed.className = "multiline";
      typed.textContent = value;
      notice.append(typed);
    }
    form.prepend(notice);
    setStatus("idle", "Not saved yet: your answers save themselves as you go.");
  };

  const copy = read("sessionStorage", copyKey);
  const stored = form.dataset.savedByTab === tab ? Number(form.dataset.tabSave) : 0;
  if (copy?.tab !== tab || (copy.sent && stored >= copy.sent)) forget("sessionStorage", copyKey);
  else restore(copy);
}

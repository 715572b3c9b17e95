// The participant's chat page: one websocket to the episode (docs/chat-protocol.md), a transcript
// rebuilt from the server's history on every (re)connect, the agent's reply shown while it is
// written, and an outbox kept in sessionStorage so a message typed before a dropped connection or
// a reload is resent with the same client_id (the server stores it once, whatever happens).
// All text from people or the model goes into the page with textContent, never as HTML.
// In a group chat (three seats or more) the history lists the speakers and every turn carries its
// seat: each speaker gets a colour from a small palette, the page shows who speaks next, and the
// message box opens only on the participant's turn.
// In a negotiation (ProMediate) the next turn is decided as it comes: a "floor" message opens the
// participant's window (intervene or let them continue, as the mediator; ask for the floor, as a party)
// with the seconds the server gives; the page only counts them down and sends the choice.

const root = document.querySelector("[data-chat]");

// Close codes after which reconnecting cannot help (see chat/protocol.py).
const REFUSALS = {
  4401: "This conversation belongs to another browser now (or to none). Please open your study link again.",
  4404: "This study does not exist any more.",
  4409: "This conversation is not open. Please reload the page.",
};
// Close codes after which the page tries again, but only after a longer back-off.
const FLOOD = 4429;
const TOO_MANY_PAGES = 4413;
const VOICES = 6; // colours in chat.css (.chat-voice-0 is the participant, 1-5 the others in seat order)
const PLACEHOLDERS = {
  speak: "Type what you say…",
  "non-verbal": "Describe a gesture or expression, e.g. smiles and nods",
  action: "Describe what you do, e.g. hands over the keys",
};

if (root) start(root);

function start(root) {
  const find = (name) => root.querySelector(`[data-${name}]`);
  const el = {
    status: find("status"),
    scroll: find("scroll"),
    log: find("log"),
    pending: find("pending"),
    typing: find("typing"),
    typingSpeaker: find("typing-speaker"),
    typingText: find("typing-text"),
    notice: find("notice"),
    composer: find("composer"),
    action: find("action"),
    message: find("message"),
    counter: find("counter"),
    hint: find("hint"),
    send: find("send"),
    leave: find("leave"),
    ended: find("ended"),
    endedMessage: find("ended-message"),
    endedHeading: find("ended-heading"),
    endedLink: find("ended-link"),
    order: find("order"),
    orderList: find("order-list"),
    turnState: find("turn-state"),
    floor: find("floor"),
    floorText: find("floor-text"),
    floorCountdown: find("floor-countdown"),
    floorChoices: [...root.querySelectorAll("[data-floor-choice]")],
  };
  const storageKey = root.dataset.storageKey;
  const state = {
    socket: null,
    connected: false,
    finished: false, // the conversation is over, or the server refused us: no more reconnects
    attempts: 0,
    reconnectTimer: null,
    retryTimer: null,
    inFlight: null, // client_id of the outbox message sent and not yet answered
    maxChars: Number(root.dataset.maxChars) || 1000,
    turnCap: 0,
    minTurns: 0, // the participant's turns the study needs before leaving counts as finishing
    you: "",
    partner: "",
    group: false, // three seats or more: speakers by seat, the order of turns, the box only on your turn
    speakers: new Map(), // seat position -> {name, you, voice}
    upcoming: [], // [{seat, name, you}] who speaks at the next turn and after
    greets: root.dataset.greets === "true", // the participant opens with the scenario's greeting
    turns: new Map(), // index -> turn as the server sent it
    next: null, // {index, side} whose turn it is, null once over
    typing: null, // {index, speaker, text, actionType, gap}
    negotiation: false, // turns go to whoever gets the floor: no order to show ahead
    floor: null, // a negotiation's open window: {index, window, deadline (ms, this page's clock), sent}
    floorTimer: null,
    noticeAboutDraft: false, // the notice shown is about the text in the box: editing it makes it stale
    outbox: loadOutbox(),
  };

  // --- the socket ---------------------------------------------------------------------------

  function connect() {
    clearTimeout(state.reconnectTimer);
    if (state.finished || (state.socket && state.socket.readyState <= WebSocket.OPEN)) return;
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${window.location.host}${root.dataset.wsPath}`);
    state.socket = socket;
    setStatus("connecting", state.attempts ? "Reconnecting…" : "Connecting…");
    socket.addEventListener("open", () => {
      state.connected = true;
      setStatus("connected", "Connected");
    });
    socket.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      const handle = handlers[message.type];
      if (handle) handle(message);
    });
    socket.addEventListener("close", (event) => {
      if (state.socket !== socket) return;
      state.connected = false;
      state.socket = null;
      state.inFlight = null;
      clearTyping();
      renderPending();
      if (state.finished) {
        updateComposer();
        return;
      }
      if (REFUSALS[event.code]) {
        state.finished = true;
        setStatus("error", "Not connected");
        showNotice(REFUSALS[event.code]);
        updateComposer();
        return;
      }
      scheduleReconnect(event.code === FLOOD || event.code === TOO_MANY_PAGES ? 5 : 0);
    });
  }

  function scheduleReconnect(extraAttempts) {
    state.attempts += 1 + extraAttempts;
    const base = Math.min(15000, 500 * 2 ** (state.attempts - 1));
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    setStatus("reconnecting", `Connection lost. Reconnecting in ${Math.ceil(delay / 1000)} s…`);
    state.reconnectTimer = setTimeout(connect, delay);
    updateComposer();
  }

  function send(message) {
    if (!state.connected) return false;
    state.socket.send(JSON.stringify(message));
    return true;
  }

  // --- messages from the server --------------------------------------------------------------

  const handlers = {
    history(message) {
      state.attempts = 0;
      state.inFlight = null;
      state.you = message.you;
      state.partner = message.partner;
      state.maxChars = message.limits.max_chars;
      state.turnCap = message.limits.turn_cap;
      state.minTurns = message.limits.min_turns || 0;
      if (message.speakers) {
        state.group = true;
        let others = 0;
        state.speakers = new Map(
          message.speakers.map((speaker) => [
            speaker.seat,
            { ...speaker, voice: speaker.you ? 0 : (others++ % (VOICES - 1)) + 1 },
          ]),
        );
        state.upcoming = message.upcoming || [];
      }
      state.turns.clear();
      el.log.replaceChildren();
      for (const turn of message.turns) addTurn(turn);
      state.next = message.next;
      state.negotiation = "floor" in message;
      setFloor(message.floor || null);
      state.typing = null;
      if (message.typing) startTyping(message.typing);
      else clearTyping();
      // A message stored before the connection dropped is in the history: forget it, never resend it.
      const stored = new Set(message.turns.map((turn) => turn.client_id).filter(Boolean));
      state.outbox = state.outbox.filter((entry) => !stored.has(entry.client_id));
      saveOutbox();
      if (message.ended) finish(message.ended);
      renderPending();
      updateCounter();
      flushOutbox();
    },
    ack(message) {
      const entry = state.outbox.find((item) => item.client_id === message.client_id);
      if (state.inFlight === message.client_id) state.inFlight = null;
      if (entry && !state.turns.has(message.index)) {
        addTurn({
          index: message.index,
          side: "you",
          speaker: state.you,
          action_type: entry.action_type,
          content: entry.content,
          client_id: entry.client_id,
        });
      }
      dropFromOutbox(message.client_id);
    },
    turn(message) {
      const highest = state.turns.size ? Math.max(...state.turns.keys()) : -1;
      addTurn(message);
      if (state.floor && state.floor.index <= message.index) setFloor(null);
      if (state.typing && state.typing.index <= message.index) clearTyping();
      state.next = message.next ? { index: message.index + 1, side: message.next } : null;
      if (message.upcoming) state.upcoming = message.upcoming;
      if (message.client_id) dropFromOutbox(message.client_id);
      if (message.index > highest + 1) send({ type: "sync" }); // missed a turn: ask for the history
      updateComposer();
      flushOutbox();
    },
    typing(message) {
      if (state.turns.has(message.index)) return;
      state.next = { index: message.index, side: "partner" };
      startTyping(message);
      updateComposer();
    },
    delta(message) {
      const typing = typingFor(message);
      if (!typing) return;
      const known = typing.text.length;
      if (typing.gap || message.offset > known) {
        typing.gap = true; // some words went past before we joined: wait for the next partial
      } else if (message.offset + message.text.length > known) {
        typing.text = typing.text.slice(0, message.offset) + message.text;
      }
      if (message.action_type) typing.actionType = message.action_type;
      renderTyping();
    },
    partial(message) {
      const typing = typingFor(message);
      if (!typing) return;
      if (typing.gap || message.text.length >= typing.text.length) {
        typing.text = message.text;
        typing.gap = false;
      }
      if (message.action_type) typing.actionType = message.action_type;
      renderTyping();
    },
    ended(message) {
      finish(message);
    },
    floor(message) {
      if (state.turns.has(message.index)) return; // about a turn already taken
      setFloor(message);
      if (message.next) state.next = message.next;
      if (message.upcoming) state.upcoming = message.upcoming;
      updateComposer();
      flushOutbox(); // a message typed before the floor was given goes out now
    },
    error(message) {
      const entry = message.client_id && state.outbox.find((item) => item.client_id === message.client_id);
      if (message.client_id === state.inFlight) state.inFlight = null;
      if (message.code === "rate_limited" && entry) {
        showNotice(message.message);
        clearTimeout(state.retryTimer);
        state.retryTimer = setTimeout(flushOutbox, (message.retry_after || 5) * 1000);
      } else if (message.code === "not_your_turn" && entry) {
        // Kept: it goes out as soon as it is the participant's turn again.
      } else {
        const givenBack = entry && entry.action_type !== "leave" && !el.message.value;
        showNotice(message.message, { aboutDraft: givenBack });
        if (entry) {
          dropFromOutbox(entry.client_id);
          if (givenBack) {
            el.message.value = entry.content; // give the text back so it can be shortened or fixed
            el.action.value = entry.action_type;
            updateCounter();
          }
        }
      }
      updateComposer();
    },
  };

  // --- the transcript ------------------------------------------------------------------------

  function addTurn(turn) {
    state.turns.set(turn.index, turn);
    const node = turnNode(turn);
    const existing = el.log.querySelector(`[data-index="${turn.index}"]`);
    if (existing) {
      existing.replaceWith(node);
    } else {
      const later = [...el.log.children].find((child) => Number(child.dataset.index) > turn.index);
      el.log.insertBefore(node, later || null);
    }
    scrollToEnd();
  }

  function voiceClass(seat) {
    const speaker = state.speakers.get(seat);
    return speaker ? ` chat-voice-${speaker.voice}` : "";
  }

  function turnNode(turn) {
    const item = document.createElement("li");
    item.className = `chat-msg chat-msg--${turn.side} chat-msg--${turn.action_type}${voiceClass(turn.seat)}`;
    item.dataset.index = String(turn.index);
    const speaker = document.createElement("span");
    speaker.className = "chat-msg__speaker";
    speaker.textContent = turn.side === "you" ? `You (${turn.speaker})` : turn.speaker;
    const content = document.createElement("p");
    content.className = "chat-msg__content";
    fillContent(content, turn.action_type, turn.content, turn.side === "you" ? "You" : turn.speaker);
    item.append(speaker, content);
    return item;
  }

  function fillContent(element, actionType, text, who) {
    if (actionType === "leave") {
      element.textContent = text ? `${who} left the conversation: “${text}”` : `${who} left the conversation.`;
    } else if (actionType === "none") {
      element.textContent = `${who} did nothing.`;
    } else {
      element.textContent = text;
      if (actionType === "non-verbal" || actionType === "action") {
        const label = document.createElement("span");
        label.className = "chat-msg__kind";
        label.textContent = actionType === "action" ? "action" : "gesture";
        element.prepend(label, " ");
      }
    }
  }

  function renderPending() {
    el.pending.replaceChildren(
      ...state.outbox.map((entry) => {
        const item = document.createElement("li");
        item.className = `chat-msg chat-msg--you chat-msg--${entry.action_type} chat-msg--pending`;
        const speaker = document.createElement("span");
        speaker.className = "chat-msg__speaker";
        let when = "will be sent when it is your turn";
        if (!state.connected) when = "will be sent when the connection is back";
        else if (state.next && state.next.side === "you") when = "sending…";
        speaker.textContent = `You · ${when}`;
        const content = document.createElement("p");
        content.className = "chat-msg__content";
        fillContent(content, entry.action_type, entry.content, "You");
        item.append(speaker, content);
        return item;
      }),
    );
    scrollToEnd();
  }

  function typingFor(message) {
    if (state.turns.has(message.index)) return null;
    if (!state.typing || state.typing.index !== message.index) {
      const next = state.upcoming[0];
      const speaker = next && !next.you ? next.name : state.partner;
      startTyping({ index: message.index, speaker, seat: next && next.seat, text: "", action_type: message.action_type });
    }
    return state.typing;
  }

  function startTyping(typing) {
    state.typing = {
      index: typing.index,
      speaker: typing.speaker || state.partner,
      seat: typing.seat,
      text: typing.text || "",
      actionType: typing.action_type || null,
      gap: false,
    };
    renderTyping();
  }

  function clearTyping() {
    state.typing = null;
    renderTyping();
  }

  function renderTyping() {
    const typing = state.typing;
    el.typing.hidden = !typing;
    renderOrder();
    if (!typing) return;
    el.typing.className = `chat-msg chat-msg--partner chat-msg--typing${voiceClass(typing.seat)}`;
    el.typingSpeaker.textContent = `${typing.speaker} is typing…`;
    el.typingText.className = `chat-msg__content chat-msg--${typing.actionType || "speak"}`;
    el.typingText.textContent = typing.text;
    scrollToEnd();
  }

  // The order of turns (group chats): who speaks now, and after them.
  function renderOrder() {
    if (!el.order) return;
    el.order.hidden = !state.group || state.finished;
    if (el.order.hidden) return;
    el.order.querySelector(".chat-order__heading").hidden = state.negotiation; // nobody's turn is known ahead
    let text = "";
    if (state.finished || !state.next) text = "";
    else if (state.next.side === "you") {
      text = state.greets && state.next.index === 0 ? "Your turn: open the conversation with a greeting." : "Your turn.";
    } else if (state.typing) text = `${state.typing.speaker} is typing…`;
    else if (state.upcoming.length) text = `Waiting for ${state.upcoming[0].name}…`;
    el.turnState.textContent = text;
    if (state.negotiation && !text) el.order.hidden = true; // nothing to say: no empty box
    el.turnState.dataset.mine = String(Boolean(state.next && state.next.side === "you" && !state.finished));
    const shown = state.finished ? [] : state.upcoming;
    el.orderList.replaceChildren(
      ...shown.map((speaker, position) => {
        const item = document.createElement("li");
        item.className = `chat-order__speaker${voiceClass(speaker.seat)}`;
        if (position === 0) item.setAttribute("aria-current", "step");
        item.textContent = speaker.you ? `You (${speaker.name})` : speaker.name;
        return item;
      }),
    );
  }

  function scrollToEnd() {
    el.scroll.scrollTop = el.scroll.scrollHeight;
  }

  // --- a negotiation's floor -------------------------------------------------------------------

  for (const button of el.floorChoices) {
    button.addEventListener("click", () => {
      if (!state.floor || state.floor.sent) return;
      if (send({ type: "floor", choice: button.dataset.floorChoice, index: state.floor.index })) {
        state.floor.sent = true;
        renderFloor();
      }
    });
  }

  function setFloor(message) {
    clearInterval(state.floorTimer);
    state.floor = message && message.window
      ? { index: message.index, window: message.window, deadline: Date.now() + message.seconds_left * 1000, sent: false }
      : null;
    if (state.floor) state.floorTimer = setInterval(renderFloor, 250);
    renderFloor();
  }

  function renderFloor() {
    if (!el.floor) return;
    const floor = state.finished ? null : state.floor;
    el.floor.hidden = !floor;
    if (!floor) {
      clearInterval(state.floorTimer);
      return;
    }
    const left = Math.max(0, Math.ceil((floor.deadline - Date.now()) / 1000));
    const mediating = floor.window === "intervene";
    el.floorText.textContent = mediating
      ? "Do you want to step in now, or let the parties continue?"
      : "The floor is open. Do you want to speak next?";
    el.floorCountdown.textContent = left
      ? `${left} s left${mediating ? " (if you do nothing, they continue)" : " (if you do nothing, someone else speaks)"}`
      : "Time is up…";
    for (const button of el.floorChoices) {
      button.hidden = (button.dataset.floorChoice === "claim") === mediating;
      button.disabled = floor.sent || !left || !state.connected;
    }
  }

  // --- the end -------------------------------------------------------------------------------

  function finish(ended) {
    const first = el.ended.hidden;
    state.finished = true;
    state.next = null;
    setFloor(null);
    state.outbox = [];
    saveOutbox();
    renderPending();
    clearTyping();
    clearTimeout(state.reconnectTimer);
    clearTimeout(state.retryTimer);
    hideNotice();
    el.endedMessage.textContent = ended.message;
    // The study ends with a code rather than the questions (chat.lifecycle.outcome_of).
    const codePage = {screened_out: root.dataset.screenedOutUrl, technical_problem: root.dataset.technicalProblemUrl};
    if (codePage[ended.outcome]) {
      el.endedLink.href = codePage[ended.outcome];
      el.endedLink.textContent = "Continue";
    }
    el.ended.hidden = false;
    el.composer.hidden = true;
    setStatus("ended", "Ended"); // the panel below says so in full, with the reason
    if (first) el.endedHeading.focus();
    if (state.socket) state.socket.close(1000);
  }

  // --- sending -------------------------------------------------------------------------------

  function myTurn() {
    return Boolean(state.connected && state.next && state.next.side === "you");
  }

  function flushOutbox() {
    if (!myTurn() || state.inFlight || !state.outbox.length) {
      renderPending();
      return;
    }
    const entry = state.outbox[0];
    state.inFlight = entry.client_id;
    send({ type: "act", client_id: entry.client_id, action_type: entry.action_type, content: entry.content });
    renderPending();
    updateComposer();
  }

  function queue(actionType, content) {
    state.outbox.push({ client_id: newClientId(), action_type: actionType, content });
    saveOutbox();
    hideNotice();
    flushOutbox();
    updateComposer();
  }

  function dropFromOutbox(clientId) {
    const before = state.outbox.length;
    state.outbox = state.outbox.filter((entry) => entry.client_id !== clientId);
    if (state.outbox.length !== before) {
      saveOutbox();
      renderPending();
    }
    updateComposer();
  }

  el.composer.addEventListener("submit", (event) => {
    event.preventDefault();
    const content = el.message.value.trim();
    if (!canSend()) return;
    if (!content) {
      showNotice("Write something before sending.", { aboutDraft: true });
      return;
    }
    queue(el.action.value, content);
    el.message.value = "";
    saveDraft();
    updateCounter();
    el.message.focus();
  });

  el.message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      el.composer.requestSubmit();
    }
  });
  el.message.addEventListener("input", () => {
    if (state.noticeAboutDraft) hideNotice();
    saveDraft();
    updateCounter();
  });
  el.action.addEventListener("change", () => {
    el.message.placeholder = PLACEHOLDERS[el.action.value] || "";
  });

  el.leave.addEventListener("click", () => {
    if (state.finished || state.outbox.some((entry) => entry.action_type === "leave")) return;
    const mine = [...state.turns.values()].filter((turn) => turn.side === "you" && turn.action_type !== "leave").length;
    const warning =
      mine < state.minTurns
        ? `Leave the conversation? You have sent ${mine} of the ${state.minTurns} messages the study needs: ` +
          "if you leave now, the study ends without the questions and you receive a screen-out code, " +
          "not the completion code."
        : "Leave the conversation? You cannot come back to it.";
    if (!window.confirm(warning)) return;
    queue("leave", "");
    if (!myTurn()) showNotice("You will leave as soon as it is your turn.");
  });

  function characters(text) {
    return [...text.trim()].length; // code points, as the server counts them
  }

  function canSend() {
    // While disconnected, a message on the participant's turn waits in the outbox for the connection.
    const turn = state.next && state.next.side === "you";
    return Boolean(turn && !state.finished && !state.outbox.length && characters(el.message.value) <= state.maxChars);
  }

  function updateCounter() {
    const used = characters(el.message.value);
    el.counter.textContent = `${used} / ${state.maxChars}`;
    el.counter.classList.toggle("chat-counter--over", used > state.maxChars);
    updateComposer();
  }

  function updateComposer() {
    el.send.disabled = !canSend();
    if (state.group) {
      // In a group chat the box opens only on the participant's turn, so nobody types to the wrong moment.
      const open = Boolean(state.next && state.next.side === "you" && !state.finished);
      el.message.disabled = !open;
      el.action.disabled = !open;
    }
    renderOrder();
    el.leave.disabled = state.finished;
    let hint = "";
    if (state.finished) hint = "";
    else if (!state.connected) hint = "Not connected: a message you send now goes out when the connection is back.";
    else if (characters(el.message.value) > state.maxChars) {
      hint = `Too long by ${characters(el.message.value) - state.maxChars} characters.`;
    } else if (state.outbox.length) hint = "Sending…";
    else if (myTurn()) hint = state.turnCap ? `Your turn (turn ${state.next.index + 1} of at most ${state.turnCap}).` : "Your turn.";
    else if (state.floor) hint = ""; // the floor panel asks for the participant's choice
    else if (state.next && state.group && state.upcoming.length) hint = `Waiting for ${state.upcoming[0].name}…`;
    else if (state.negotiation) hint = "Waiting for the others…";
    else if (state.next) hint = `Waiting for ${state.partner || "the other person"}…`;
    el.hint.textContent = hint;
  }

  // --- small things --------------------------------------------------------------------------

  function setStatus(kind, text) {
    el.status.dataset.state = kind;
    el.status.textContent = text;
  }

  function showNotice(text, { aboutDraft = false } = {}) {
    el.notice.textContent = text;
    el.notice.hidden = false;
    state.noticeAboutDraft = aboutDraft;
  }

  function hideNotice() {
    state.noticeAboutDraft = false;
    el.notice.hidden = true;
    el.notice.textContent = "";
  }

  function newClientId() {
    if (window.crypto && typeof window.crypto.randomUUID === "function") return window.crypto.randomUUID();
    const bytes = window.crypto.getRandomValues(new Uint8Array(16)); // randomUUID needs a secure context
    return [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  }

  function loadOutbox() {
    try {
      const saved = JSON.parse(window.sessionStorage.getItem(storageKey) || "[]");
      return Array.isArray(saved) ? saved : [];
    } catch {
      return [];
    }
  }

  // What is typed but not sent yet survives a reload of the page (and nothing else).
  function saveDraft() {
    try {
      if (el.message.value) window.sessionStorage.setItem(`${storageKey}:draft`, el.message.value);
      else window.sessionStorage.removeItem(`${storageKey}:draft`);
    } catch {
      // Storage may be unavailable (private mode): the draft then lasts as long as the page.
    }
  }

  function restoreDraft() {
    try {
      const draft = window.sessionStorage.getItem(`${storageKey}:draft`);
      if (draft && !el.message.value) el.message.value = draft;
    } catch {
      // nothing kept
    }
  }

  function saveOutbox() {
    try {
      if (state.outbox.length) window.sessionStorage.setItem(storageKey, JSON.stringify(state.outbox));
      else window.sessionStorage.removeItem(storageKey);
    } catch {
      // Storage may be unavailable (private mode): the outbox then lasts as long as the page.
    }
  }

  // Come back at once when the browser says the network or the tab is back.
  const reconnectNow = () => {
    if (!state.socket && !state.finished) {
      state.attempts = Math.max(0, state.attempts - 1);
      connect();
    }
  };
  window.addEventListener("online", reconnectNow);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") reconnectNow();
  });

  el.message.placeholder = PLACEHOLDERS[el.action.value] || "";
  restoreDraft();
  renderPending();
  updateCounter();
  connect();
}

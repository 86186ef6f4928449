// Following the lecturer on a local network, as a reveal.js plugin.
//
// `python3 build.py serve --host 0.0.0.0` offers one server-sent-events
// channel (deckbuild.follow) and prints two addresses: the students', and the
// lecturer's, which carries a secret key (?profesor=KEY). Where the deck comes
// from that server (it answers with the FOLLOW.availableHeader header), the
// page opened with the key publishes each slide it shows, and every other page
// offers «Seguir al profesor»: it then goes wherever the lecturer goes, until
// the student moves on their own — that stops following at once, and the same
// button («Volver con el profesor») takes them back. On any other host
// (a static server, a file) the feature is absent: one HEAD request for the
// page itself finds that out, and nothing else is ever asked.
//
// The key is taken out of the address as soon as this module runs, kept in
// this tab's sessionStorage (a reload keeps it) and sent only in a header of
// the publishing request; the Python worker never sees it, and a cell cannot
// reach the channel at all (worker/netguard.js). A student's page only
// listens: the channel takes nothing from it.

import { announce } from "./announcer.js";
import { deckBaseUrl, deckPath, isFilePage, isPrintPdf, isReceiver } from "./page.js";
import { FOLLOW } from "../shared/protocol.js";

const TEXT = {
  follow: "Seguir al profesor",
  followTitle: "Tus diapositivas van adonde vaya el profesor; si cambias de diapositiva, dejas de seguirlo",
  following: "Siguiendo al profesor",
  followingTitle: "Pulsa para dejar de seguir al profesor (cambiar de diapositiva también lo deja)",
  rejoin: (slide) => (slide ? `Volver con el profesor (diapositiva ${slide})` : "Volver con el profesor"),
  rejoinTitle: "Ir a la diapositiva del profesor y seguirlo otra vez",
  connecting: "Conectando con el profesor…",
  lost: "Sin conexión con el profesor · Reintentar",
  lostTitle: "El servidor de la clase no contesta: pulsa para intentarlo otra vez",
  live: (count) => `En directo · ${count === 1 ? "1 estudiante te sigue" : `${count} estudiantes te siguen`}`,
  liveTitle: "Tus diapositivas llegan a quienes pulsaron «Seguir al profesor»",
  badKey: "La clave del profesor no es válida: nadie recibe tus diapositivas",
  stopped: "Dejaste de seguir al profesor.",
  started: "Sigues al profesor.",
};
const KEY_STORAGE = `dpdeck:lecturer-key:${deckPath}`;
const SLIDE_EVENTS = ["slidechanged", "fragmentshown", "fragmenthidden"];

/**
 * The lecturer's key: taken from ?profesor=KEY (and removed from the address:
 * a shared link, the speaker view's previews and the history never carry it),
 * or kept from earlier in this tab; null for everyone else.
 */
export const lecturerKey = takeLecturerKey();

function takeLecturerKey() {
  if (isReceiver || isPrintPdf) return null;
  const given = new URLSearchParams(window.location.search).get(FOLLOW.keyParam);
  if (given !== null) {
    const url = new URL(window.location.href);
    url.searchParams.delete(FOLLOW.keyParam);
    window.history.replaceState(window.history.state, "", url.href);
    try {
      if (given) window.sessionStorage.setItem(KEY_STORAGE, given);
    } catch {
      /* no session storage: the key lasts as long as the page */
    }
    return given || null;
  }
  try {
    return window.sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

/** Whether the server that sent this deck offers the channel: one HEAD request for the deck's own page. */
async function channelOffered() {
  if (navigator.onLine === false) return false;
  try {
    const response = await fetch(deckBaseUrl, { method: "HEAD", cache: "no-store" });
    // Read to its (empty) end: a response left unread is cancelled when it is collected, which the browser logs as a failure.
    await response.arrayBuffer();
    return response.ok && response.headers.get(FOLLOW.availableHeader) !== null;
  } catch {
    return false;
  }
}

function indicesOf(reveal) {
  const { h, v, f } = reveal.getIndices();
  return { h: h || 0, v: v || 0, f: typeof f === "number" ? f : -1 };
}

function sameSlide(a, b) {
  return a && b && a.h === b.h && a.v === b.v && a.f === b.f;
}

/** A slide position from the channel, checked: whole numbers within the contract's bounds. */
function readSlide(data) {
  let value;
  try {
    value = JSON.parse(data);
  } catch {
    return null;
  }
  const limit = FOLLOW.maxSlideIndex;
  const whole = (number, low) => Number.isInteger(number) && number >= low && number <= limit;
  if (!value || !whole(value.h, 0) || !whole(value.v, 0) || !whole(value.f, -1)) return null;
  return { h: value.h, v: value.v, f: value.f };
}

class Lecturer {
  constructor(reveal, key, pill) {
    this.reveal = reveal;
    this.key = key;
    this.pill = pill;
    this.sending = false;
    this.pending = null;
    this.refused = false;
    this.url = new URL(FOLLOW.publish, deckBaseUrl);
    for (const name of SLIDE_EVENTS) reveal.on(name, () => this.publish());
    this.pill.show({ state: "live", text: TEXT.live(0), title: TEXT.liveTitle });
    this.publish();
  }

  /** The slide now on screen goes to the channel; while one is on its way, only the latest waits. */
  async publish() {
    if (this.refused) return;
    this.pending = indicesOf(this.reveal);
    if (this.sending) return;
    this.sending = true;
    while (this.pending) {
      const slide = this.pending;
      this.pending = null;
      const url = new URL(this.url);
      for (const [name, value] of Object.entries(slide)) url.searchParams.set(name, String(value));
      try {
        const response = await fetch(url, { headers: { [FOLLOW.keyHeader]: this.key }, cache: "no-store" });
        if (response.status === 403) {
          this.refused = true;
          this.pill.show({ state: "refused", text: TEXT.badKey, title: TEXT.badKey });
          break;
        }
        if (response.ok) {
          const { followers } = await response.json();
          if (Number.isInteger(followers)) this.pill.show({ state: "live", text: TEXT.live(followers), title: TEXT.liveTitle });
        }
      } catch {
        // The server has gone: the next slide tries again (never a loop of retries).
      }
    }
    this.sending = false;
  }
}

class Student {
  constructor(reveal, pill) {
    this.reveal = reveal;
    this.pill = pill;
    this.source = null;
    this.state = "off";
    this.lecturer = null;   // the lecturer's latest slide
    this.applying = null;   // the slide being applied: its own events are not the student's
    for (const name of SLIDE_EVENTS) reveal.on(name, () => this.onNavigate());
    this.pill.onPress(() => this.press());
    this.show();
  }

  press() {
    if (this.state === "following") this.stop({ close: true });
    else if (this.state === "detached" && this.source) this.rejoin();
    else this.start();
  }

  start() {
    this.close();
    this.state = "connecting";
    this.show();
    const source = new EventSource(new URL(FOLLOW.events, deckBaseUrl));
    this.source = source;
    source.addEventListener(FOLLOW.event, (event) => this.onSlide(event.data));
    source.addEventListener("open", () => {
      if (this.state === "connecting" || this.state === "lost") {
        this.state = "following";
        this.show();
        announce(TEXT.started);
      }
    });
    source.addEventListener("error", () => {
      // CONNECTING: the browser tries again after the server's `retry:`; CLOSED: it gave up.
      if (source.readyState === EventSource.CLOSED) {
        this.close();
        this.state = "lost";
      } else if (this.state !== "detached") {
        this.state = "connecting";
      }
      this.show();
    });
  }

  onSlide(data) {
    const slide = readSlide(data);
    if (!slide) return;
    this.lecturer = slide;
    if (this.state === "connecting") this.state = "following";
    if (this.state === "following") this.go(slide);
    this.show();
  }

  go(slide) {
    if (sameSlide(indicesOf(this.reveal), slide)) return;
    this.applying = slide;
    try {
      this.reveal.slide(slide.h, slide.v, slide.f);
    } finally {
      this.applying = null;
    }
  }

  /** The student moved (not the channel): following stops at once. */
  onNavigate() {
    if (this.applying || this.state !== "following") return;
    if (sameSlide(indicesOf(this.reveal), this.lecturer)) return;
    this.stop({ close: false });
  }

  stop({ close }) {
    if (close) this.close();
    this.state = close ? "off" : "detached";
    this.show();
    announce(TEXT.stopped);
  }

  rejoin() {
    this.state = "following";
    if (this.lecturer) this.go(this.lecturer);
    this.show();
    announce(TEXT.started);
  }

  close() {
    if (this.source) this.source.close();
    this.source = null;
  }

  show() {
    const slideNumber = this.lecturer ? this.numberOf(this.lecturer) : null;
    const views = {
      off: { text: TEXT.follow, title: TEXT.followTitle },
      connecting: { text: TEXT.connecting, title: TEXT.followTitle },
      following: { text: TEXT.following, title: TEXT.followingTitle },
      detached: { text: TEXT.rejoin(slideNumber), title: TEXT.rejoinTitle },
      lost: { text: TEXT.lost, title: TEXT.lostTitle },
    };
    this.pill.show({ state: this.state, ...views[this.state] });
  }

  /** "12": the lecturer's slide as the slide number in the corner counts it. */
  numberOf(slide) {
    const element = this.reveal.getSlide(slide.h, slide.v || undefined);
    return element ? String(this.reveal.getSlidePastCount(element) + 1) : null;
  }
}

/** The button (a student's) or the label (the lecturer's) in the window's top-right corner. */
class Pill {
  constructor(interactive) {
    this.element = document.createElement(interactive ? "button" : "p");
    this.element.className = "follow-pill";
    if (interactive) {
      this.element.type = "button";
      this.element.dataset.action = "follow";
    } else {
      this.element.setAttribute("role", "status");
    }
    this.element.hidden = true;
    document.body.append(this.element);
  }

  onPress(handler) {
    this.element.addEventListener("click", (event) => {
      if (event.detail > 0) this.element.blur();
      handler();
    });
    // Enter and Space press the button; they are not slide navigation.
    this.element.addEventListener("keydown", (event) => event.stopPropagation());
  }

  show({ state, text, title }) {
    this.element.hidden = false;
    this.element.dataset.state = state;
    this.element.textContent = text;
    this.element.title = title;
  }
}

/** The plugin, listed in main.js. */
export function FollowLecturer() {
  let role = null;
  return {
    id: "dpdeck-follow",
    init(reveal) {
      if (isReceiver || isPrintPdf || isFilePage) return;
      reveal.on("ready", async () => {
        if (!(await channelOffered())) return;
        role = lecturerKey ? new Lecturer(reveal, lecturerKey, new Pill(false))
          : new Student(reveal, new Pill(true));
      });
    },
    /** "lecturer", "student" (where the server offers the channel), or null. */
    get role() {
      if (!role) return null;
      return role instanceof Lecturer ? "lecturer" : "student";
    },
    /** A student's state: off | connecting | following | detached | lost; null otherwise. */
    get state() {
      return role instanceof Student ? role.state : null;
    },
  };
}

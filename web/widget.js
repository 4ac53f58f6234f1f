/*
 * CloudRUX GPU advisor chat widget: plain JavaScript, no build step, no CDN.
 *
 * Embed on any page with one element and one script tag:
 *   <div id="gpu-advisor-chat" data-lang="fa"></div>
 *   <script src="https://advisor.example.com/widget.js" defer></script>
 *
 * Options (data-* on the element): data-lang "fa" | "tr" (interface language; default: the browser's language when
 * it is Persian or Turkish, else the page's language, else fa),
 * data-socket-url (Rasa base URL; default: /config.json of the widget's server, else <widget host>:5005),
 * data-socket-path (default /socket.io), data-greet "false" (do not ask for a greeting on the first visit).
 *
 * Language: the labels, placeholder and buttons follow the conversation: when the assistant answers in the other
 * language, the widget switches with it. The first message of a new conversation carries the browser language as
 * metadata `locale` (navigator.language), so that a first message with no language signal ("8B QLoRA 2048") is
 * answered in the browser's language.
 *
 * Security: every bot text is put into the page with textContent, never innerHTML; links and markup in replies
 * show as typed. Images are shown only for http(s) URLs.
 */
(function () {
  "use strict";

  var SCRIPT = document.currentScript;
  var BASE = new URL(".", SCRIPT ? SCRIPT.src : window.location.href);
  var STORAGE_PREFIX = "gpuAdvisor.";
  var HISTORY_LIMIT = 200;
  var TYPING_TIMEOUT_MS = 30000;

  // Interface chrome only, the one place the widget's own texts live (both languages, same keys); everything the
  // assistant says comes from Rasa in the user's language.
  var UI_TEXT = {
    fa: {
      title: "مشاور GPU ابری",
      subtitle: "برآورد حافظه، کارت مناسب و هزینهٔ فاین‌تیون",
      inputLabel: "پیام شما",
      placeholder: "پیام خود را بنویسید…",
      send: "ارسال",
      typing: "در حال نوشتن…",
      connecting: "در حال اتصال…",
      reconnecting: "اتصال قطع شد؛ در حال اتصال دوباره…",
      connected: "متصل",
      chart: "نمودار حافظهٔ GPU",
      log: "گفت‌وگو با مشاور GPU",
      you: "شما",
      bot: "مشاور",
      newChat: "گفت‌وگوی تازه",
      choices: "گزینه‌ها",
      file: "فایل داده",
      fileLabel: "فرستادن فایل داده‌های آموزشی (JSONL، CSV یا XLSX)"
    },
    tr: {
      title: "Bulut GPU danışmanı",
      subtitle: "Bellek tahmini, uygun GPU ve ince ayar maliyeti",
      inputLabel: "Mesajınız",
      placeholder: "Mesajınızı yazın…",
      send: "Gönder",
      typing: "yazıyor…",
      connecting: "Bağlanıyor…",
      reconnecting: "Bağlantı koptu; yeniden bağlanılıyor…",
      connected: "Bağlı",
      chart: "GPU bellek grafiği",
      log: "GPU danışmanı ile sohbet",
      you: "Siz",
      bot: "Danışman",
      newChat: "Yeni sohbet",
      choices: "Seçenekler",
      file: "Veri dosyası",
      fileLabel: "Eğitim verisi dosyası gönder (JSONL, CSV veya XLSX)"
    }
  };

  // ---- direction ------------------------------------------------------------------------------------------
  var RTL_LETTER = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/g;
  var LTR_LETTER = /[A-Za-z\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF]/g;
  // Runs of Latin words, numbers and units ("Llama 3.1 8B", "24 GB", "$1.20/h") that get their own isolated
  // direction inside right-to-left text, so their digits and dots stay in reading order.
  var LATIN_RUN = /[A-Za-z0-9$€£+][A-Za-z0-9$€£%.,:\/+\-_×'’()]*(?:[ \u00A0]+\(?[A-Za-z0-9$€£+][A-Za-z0-9$€£%.,:\/+\-_×'’()]*)*/g;
  // Sentence punctuation and unpaired brackets at the end of a run belong to the Persian sentence around it.
  var RUN_TAIL = /[.,:;!?'’(]+$|\)+$/;

  /** "rtl" when the text is mostly Persian (Arabic script), else "ltr". */
  function textDirection(text) {
    var rtl = (String(text).match(RTL_LETTER) || []).length;
    var ltr = (String(text).match(LTR_LETTER) || []).length;
    if (rtl === 0 && ltr === 0) return null;
    return rtl * 3 >= ltr ? "rtl" : "ltr";
  }

  var TURKISH_LETTER = /[çğıöşüÇĞİÖŞÜ]/;

  /** "fa" or "tr" for a language tag ("tr-TR", "fa_IR", "FA"), else null. */
  function supported(tag) {
    var code = String(tag || "").toLowerCase().slice(0, 2);
    return UI_TEXT[code] ? code : null;
  }

  /** The browser's language tag as the browser states it (sent as metadata `locale`), or "". */
  function browserLocale() {
    var tag = (navigator.languages && navigator.languages[0]) || navigator.language || "";
    return String(tag).slice(0, 35);  // a BCP 47 tag is at most 35 characters; the server accepts no more
  }

  /** Interface language: the embedder's data-lang, else the first fa/tr language the browser prefers, else the
   * page's language, else Persian. */
  function uiLanguage(el) {
    var fromBrowser = null;
    var preferred = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language];
    for (var i = 0; i < preferred.length && !fromBrowser; i++) fromBrowser = supported(preferred[i]);
    return supported(el.getAttribute("data-lang")) || fromBrowser || supported(document.documentElement.lang) || "fa";
  }

  /** The language of one bot message: "fa" (mostly Arabic script, no Turkish letter), "tr" (Latin script with a
   * Turkish letter), or null (bilingual, English-only or no letters: the interface stays as it is). */
  function messageLanguage(text) {
    var rtl = (String(text).match(RTL_LETTER) || []).length;
    var ltr = (String(text).match(LTR_LETTER) || []).length;
    var turkish = TURKISH_LETTER.test(text);
    if (rtl > 0 && !turkish && rtl * 3 >= ltr) return "fa";
    if (rtl === 0 && turkish) return "tr";
    return null;
  }

  // ---- DOM helpers (text only) ----------------------------------------------------------------------------
  function make(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function count(text, char) {
    return text.split(char).length - 1;
  }

  /** Drop trailing punctuation, and closing brackets without their opening one, from a Latin run. */
  function trimRun(run) {
    for (;;) {
      var tail = run.match(RUN_TAIL);
      if (!tail) return run;
      if (tail[0].charAt(0) === ")" && count(run, "(") >= count(run, ")")) return run;
      var cut = tail[0].charAt(0) === ")" ? 1 : tail[0].length;
      run = run.slice(0, run.length - cut);
    }
  }

  /** Fill `node` with `text` as plain text; in RTL text, Latin/number runs go into <bdi> so they stay readable. */
  function fillText(node, text, dir) {
    text = String(text);
    if (dir !== "rtl") {
      node.textContent = text;
      return;
    }
    var last = 0;
    text.replace(LATIN_RUN, function (run, offset) {
      run = trimRun(run);
      if (!run) return run;
      if (offset > last) node.appendChild(document.createTextNode(text.slice(last, offset)));
      node.appendChild(make("bdi", null, run));
      last = offset + run.length;
      return run;
    });
    if (last < text.length) node.appendChild(document.createTextNode(text.slice(last)));
  }

  function safeImageUrl(src) {
    try {
      var url = new URL(String(src), window.location.href);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch (e) {
      return null;
    }
  }

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var tag = document.createElement("script");
      tag.src = src;
      tag.onload = resolve;
      tag.onerror = function () { reject(new Error("cannot load " + src)); };
      document.head.appendChild(tag);
    });
  }

  function loadStyle(href) {
    if (document.querySelector('link[data-gpu-advisor-style]')) return;
    var link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = href;
    link.setAttribute("data-gpu-advisor-style", "");
    document.head.appendChild(link);
  }

  function storageGet(key, fallback) {
    try {
      var raw = window.localStorage.getItem(STORAGE_PREFIX + key);
      return raw === null ? fallback : JSON.parse(raw);
    } catch (e) {
      return fallback;
    }
  }

  function storageSet(key, value) {
    try {
      window.localStorage.setItem(STORAGE_PREFIX + key, JSON.stringify(value));
    } catch (e) { /* private mode or full storage: the chat still works, it just is not kept */ }
  }

  function storageRemove(key) {
    try {
      window.localStorage.removeItem(STORAGE_PREFIX + key);
    } catch (e) { /* nothing stored */ }
  }

  // ---- the widget -----------------------------------------------------------------------------------------
  function Widget(root, options) {
    this.root = root;
    this.options = options;
    this.lang = uiLanguage(root);
    this.t = UI_TEXT[this.lang];
    // The host page's storage keeps only the session the server issued ({id, token}), never what was typed: the
    // server sends the conversation back (masked) when the session is resumed. Older versions kept the chat here.
    var saved = storageGet("session", null);
    this.sessionId = saved && typeof saved === "object" ? saved.id || null : null;
    this.sessionToken = saved && typeof saved === "object" ? saved.token || null : null;
    storageRemove("history");
    this.history = [];
    this.typingTimer = null;
    this.build();
    this.restore();
  }

  Widget.prototype.build = function () {
    var t = this.t;
    var root = this.root;
    root.classList.add("gpa");
    if (root.getAttribute("data-mode") === "page") root.classList.add("gpa--page");
    root.setAttribute("dir", this.lang === "fa" ? "rtl" : "ltr");
    root.setAttribute("lang", this.lang);
    root.textContent = "";

    var header = make("div", "gpa-header");
    var titles = make("div", "gpa-titles");
    this.titleNode = make("h2", "gpa-title", t.title);
    this.subtitleNode = make("p", "gpa-subtitle", t.subtitle);
    titles.appendChild(this.titleNode);
    titles.appendChild(this.subtitleNode);
    header.appendChild(titles);
    this.resetButton = make("button", "gpa-reset", t.newChat);
    this.resetButton.type = "button";
    header.appendChild(this.resetButton);
    root.appendChild(header);

    this.statusKey = "connecting";
    this.status = make("div", "gpa-status", t.connecting);
    this.status.setAttribute("role", "status");
    root.appendChild(this.status);

    this.log = make("div", "gpa-log");
    this.log.setAttribute("role", "log");
    this.log.setAttribute("aria-live", "polite");
    this.log.setAttribute("aria-relevant", "additions");
    this.log.setAttribute("aria-label", t.log);
    this.log.tabIndex = 0;
    root.appendChild(this.log);

    this.typing = make("div", "gpa-typing");
    this.typing.setAttribute("aria-hidden", "true");
    this.typing.hidden = true;
    for (var i = 0; i < 3; i++) this.typing.appendChild(make("span", "gpa-dot"));
    this.typingLabel = make("span", "gpa-sr", t.typing);
    this.typing.appendChild(this.typingLabel);
    root.appendChild(this.typing);

    var form = make("form", "gpa-form");
    var inputId = "gpa-input-" + Math.random().toString(36).slice(2, 8);
    var label = make("label", "gpa-sr", t.inputLabel);
    label.htmlFor = inputId;
    this.inputLabel = label;
    this.input = make("textarea", "gpa-input");
    this.input.id = inputId;
    this.input.rows = 1;
    this.input.placeholder = t.placeholder;
    this.input.setAttribute("dir", "auto");
    this.input.setAttribute("autocomplete", "off");
    this.sendButton = make("button", "gpa-send", t.send);
    this.sendButton.type = "submit";
    // The data check (issue 23): a training file goes over the session's socket.io connection in chunks.
    this.fileInput = make("input", "gpa-file-input");
    this.fileInput.type = "file";
    this.fileInput.accept = ".jsonl,.json,.ndjson,.csv,.tsv,.xlsx";
    this.fileInput.hidden = true;
    this.fileButton = make("button", "gpa-file", t.file);
    this.fileButton.type = "button";
    this.fileButton.setAttribute("aria-label", t.fileLabel);
    this.fileButton.title = t.fileLabel;
    form.appendChild(label);
    form.appendChild(this.fileButton);
    form.appendChild(this.fileInput);
    form.appendChild(this.input);
    form.appendChild(this.sendButton);
    root.appendChild(form);

    var self = this;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      self.sendTyped();
    });
    this.input.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        self.sendTyped();
      }
    });
    this.resetButton.addEventListener("click", function () { self.reset(); });
    this.fileButton.addEventListener("click", function () { self.fileInput.click(); });
    this.fileInput.addEventListener("change", function () {
      var file = self.fileInput.files && self.fileInput.files[0];
      self.fileInput.value = "";
      if (file) self.upload(file);
    });
  };

  var UPLOAD_CHUNK_BYTES = 256 * 1024;  // under engine.io's 1 MB message limit (bot/assistant/channels/dataset_upload.py)

  /** Send a training file in chunks; the figures come back as the assistant's answer. */
  Widget.prototype.upload = function (file) {
    var self = this;
    if (!this.socket) return;
    var entry = { from: "user", text: "\uD83D\uDCCE " + file.name };
    this.remember(entry);
    this.render(entry, false);
    this.scrollDown();
    this.setTyping(true);
    var uploadId = "";
    for (var i = 0; i < 4; i++) uploadId += Math.random().toString(36).slice(2, 10);
    uploadId = uploadId.replace(/[^A-Za-z0-9]/g, "").slice(0, 32);
    var index = 0;
    function next(offset) {
      var last = offset + UPLOAD_CHUNK_BYTES >= file.size;
      file.slice(offset, offset + UPLOAD_CHUNK_BYTES).arrayBuffer().then(function (buffer) {
        var chunk = { session_id: self.sessionId, session_token: self.sessionToken, upload_id: uploadId,
                      index: index, data: buffer, last: last };
        if (index === 0) chunk.name = file.name;
        index += 1;
        self.socket.emit("dataset_chunk", chunk, function (answer) {
          if (answer && answer.ok && !last) next(offset + UPLOAD_CHUNK_BYTES);
        });
      });
    }
    next(0);
  };

  /** The masked copy of an uploaded file (dataset_masked): a download button; texts come from the server. */
  Widget.prototype.offerMasked = function (offer) {
    if (!offer || typeof offer !== "object" || typeof offer.copy_id !== "string") return;
    var self = this;
    var row = make("div", "gpa-row gpa-row--bot gpa-masked");
    var node = make("button", "gpa-masked-download", String(offer.button || ""));
    node.type = "button";
    node.setAttribute("dir", textDirection(node.textContent) || "auto");
    row.appendChild(node);
    this.log.appendChild(row);
    this.scrollDown();
    node.addEventListener("click", function () {
      node.disabled = true;
      self.downloadMasked(offer, function (ok) {
        var note = make("div", "gpa-text", String((ok ? offer.downloaded : offer.gone) || ""));
        note.setAttribute("dir", textDirection(note.textContent) || "auto");
        row.replaceChild(note, node);
      });
    });
  };

  /** Fetch the masked copy chunk by chunk over the session, then hand it to the browser as a download. */
  Widget.prototype.downloadMasked = function (offer, done) {
    var self = this;
    var parts = [];
    function next(index) {
      self.socket.emit("dataset_masked_chunk", { session_id: self.sessionId, session_token: self.sessionToken,
                                                 copy_id: offer.copy_id, index: index }, function (answer) {
        if (!answer || answer.error || !answer.data) return done(false);
        parts.push(answer.data);
        if (!answer.last) return next(index + 1);
        var url = URL.createObjectURL(new Blob(parts, { type: "application/octet-stream" }));
        var link = make("a");
        link.href = url;
        link.download = String(offer.file_name || "masked");
        document.body.appendChild(link);
        link.click();
        document.body.removeChild(link);
        setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
        done(true);
      });
    }
    if (this.socket) next(0); else done(false);
  };

  Widget.prototype.restore = function () {
    for (var i = 0; i < this.history.length; i++) this.render(this.history[i], i === this.history.length - 1);
    // A resumed conversation keeps the language its latest bot message was written in.
    for (var j = this.history.length - 1; j >= 0; j--) {
      var lang = this.history[j].from === "bot" && this.history[j].text ? messageLanguage(this.history[j].text) : null;
      if (lang) {
        this.setLanguage(lang);
        break;
      }
    }
    this.scrollDown();
  };

  /** Switch the interface chrome (labels, placeholder, buttons, direction) to `lang`; messages stay as written. */
  Widget.prototype.setLanguage = function (lang) {
    if (!UI_TEXT[lang] || lang === this.lang) return;
    var t = UI_TEXT[lang];
    this.lang = lang;
    this.t = t;
    this.root.setAttribute("dir", lang === "fa" ? "rtl" : "ltr");
    this.root.setAttribute("lang", lang);
    this.titleNode.textContent = t.title;
    this.subtitleNode.textContent = t.subtitle;
    this.resetButton.textContent = t.newChat;
    this.status.textContent = t[this.statusKey] || this.status.textContent;
    this.log.setAttribute("aria-label", t.log);
    this.typingLabel.textContent = t.typing;
    this.inputLabel.textContent = t.inputLabel;
    this.input.placeholder = t.placeholder;
    this.sendButton.textContent = t.send;
    var groups = this.log.querySelectorAll(".gpa-buttons");
    for (var i = 0; i < groups.length; i++) groups[i].setAttribute("aria-label", t.choices);
  };

  Widget.prototype.remember = function (entry) {
    this.history.push(entry);
    if (this.history.length > HISTORY_LIMIT) this.history = this.history.slice(-HISTORY_LIMIT);
  };

  Widget.prototype.scrollDown = function () {
    this.log.scrollTop = this.log.scrollHeight;
  };

  /** Draw one history entry: {from: "user"|"bot", text?, image?, buttons?: [{title, payload}]}. */
  Widget.prototype.render = function (entry, buttonsActive) {
    var t = this.t;
    var row = make("div", "gpa-row gpa-row--" + entry.from);
    var bubble = make("div", "gpa-bubble gpa-bubble--" + entry.from);
    var who = make("span", "gpa-sr", (entry.from === "user" ? t.you : t.bot) + ": ");
    bubble.appendChild(who);

    if (entry.text) {
      var dir = textDirection(entry.text) || (this.lang === "fa" ? "rtl" : "ltr");
      var body = make("div", "gpa-text");
      body.setAttribute("dir", dir);
      body.setAttribute("lang", dir === "rtl" ? "fa" : "tr");
      fillText(body, entry.text, dir);
      bubble.appendChild(body);
      bubble.setAttribute("dir", dir);
    }
    if (entry.image) {
      var src = safeImageUrl(entry.image);
      if (src) {
        var img = make("img", "gpa-image");
        img.alt = t.chart;
        img.loading = "lazy";
        img.src = src;
        var self = this;
        img.addEventListener("load", function () { self.scrollDown(); });
        bubble.appendChild(img);
        bubble.classList.add("gpa-bubble--image");
      }
    }
    row.appendChild(bubble);

    if (entry.buttons && entry.buttons.length) {
      var group = make("div", "gpa-buttons");
      group.setAttribute("role", "group");
      group.setAttribute("aria-label", t.choices);
      for (var i = 0; i < entry.buttons.length; i++) {
        group.appendChild(this.quickReply(entry.buttons[i], buttonsActive));
      }
      row.appendChild(group);
    }
    this.log.appendChild(row);
    return row;
  };

  Widget.prototype.quickReply = function (button, active) {
    var node = make("button", "gpa-button");
    node.type = "button";
    var title = String(button.title || button.payload || "");
    node.setAttribute("dir", textDirection(title) || "auto");
    node.textContent = title;
    node.disabled = !active;
    var self = this;
    node.addEventListener("click", function () {
      self.disableButtons();
      self.send(String(button.payload || title), title);
    });
    return node;
  };

  Widget.prototype.disableButtons = function () {
    var buttons = this.log.querySelectorAll(".gpa-button");
    for (var i = 0; i < buttons.length; i++) buttons[i].disabled = true;
  };

  Widget.prototype.setTyping = function (on) {
    var self = this;
    this.typing.hidden = !on;
    clearTimeout(this.typingTimer);
    if (on) this.typingTimer = setTimeout(function () { self.typing.hidden = true; }, TYPING_TIMEOUT_MS);
  };

  Widget.prototype.setStatus = function (text, state) {
    // The label's key, so that a language switch can re-label it: "connected" | "reconnecting" | "connecting".
    this.statusKey = state === "connected" ? "connected" : state === "connecting" ? "connecting" : "reconnecting";
    this.status.textContent = text;
    this.root.setAttribute("data-connection", state);
  };

  Widget.prototype.sendTyped = function () {
    var text = this.input.value.trim();
    if (!text) return;
    this.input.value = "";
    this.disableButtons();
    this.send(text, text);
    this.input.focus();
  };

  /** Send `message` to Rasa and show `shown` (a button shows its title, not its payload). */
  Widget.prototype.send = function (message, shown, hidden) {
    if (!hidden) {
      var entry = { from: "user", text: shown };
      this.remember(entry);
      this.render(entry, false);
      this.scrollDown();
    }
    this.setTyping(true);
    var data = { message: message, session_id: this.sessionId, session_token: this.sessionToken };
    var metadata = {};
    if (hidden) metadata.language_hint = this.lang;
    if (this.sendLocale) {
      // The first message of a new conversation says which language the browser speaks (issue 13 #5).
      var locale = browserLocale();
      if (locale) metadata.locale = locale;
      this.sendLocale = false;
    }
    if (metadata.language_hint || metadata.locale) data.metadata = metadata;
    if (this.socket) this.socket.emit("user_uttered", data);
  };

  /** One bot_uttered event from Rasa's socket.io channel. */
  Widget.prototype.receive = function (message) {
    if (!message || typeof message !== "object") return;
    var entry = { from: "bot" };
    if (typeof message.text === "string" && message.text) entry.text = message.text;
    var buttons = message.quick_replies || message.buttons;
    if (Array.isArray(buttons)) {
      entry.buttons = buttons.filter(function (b) { return b && (b.title || b.payload); })
        .map(function (b) { return { title: String(b.title || b.payload), payload: String(b.payload || b.title) }; });
    }
    var attachment = message.attachment;
    if (attachment && attachment.type === "image" && attachment.payload && attachment.payload.src) {
      entry.image = String(attachment.payload.src);
    } else if (typeof message.image === "string") {
      entry.image = message.image;
    }
    if (!entry.text && !entry.image && !(entry.buttons && entry.buttons.length)) return;
    if (entry.text) this.setLanguage(messageLanguage(entry.text));
    if (entry.buttons && entry.buttons.length) this.disableButtons();
    this.setTyping(false);
    this.remember(entry);
    this.render(entry, true);
    this.scrollDown();
  };

  Widget.prototype.reset = function () {
    this.history = [];
    this.sessionId = null;
    this.sessionToken = null;
    storageRemove("session");
    this.log.textContent = "";
    this.input.focus();
    if (!this.socket) return;
    // A fresh connection leaves the old conversation's room; the greeting follows its session_confirm.
    this.pendingGreet = true;
    this.socket.disconnect();
    this.socket.connect();
  };

  Widget.prototype.greet = function () {
    if (this.root.getAttribute("data-greet") === "false") return;
    // A hidden opening payload: the assistant greets in this page's language (entity `language`), and what the
    // user types afterwards decides from then on.
    this.send("/set_language" + JSON.stringify({ language: this.lang }), null, true);
  };

  Widget.prototype.connect = function (io, url, path) {
    var self = this;
    this.pendingGreet = !this.sessionId;
    this.socket = io(url, { path: path, transports: ["polling", "websocket"], reconnection: true,
                            reconnectionDelay: 1000, reconnectionDelayMax: 10000 });
    this.socket.on("connect", function () {
      // After every (re)connection: rejoin the conversation's room so replies find this tab.
      self.socket.emit("session_request", { session_id: self.sessionId, session_token: self.sessionToken });
    });
    this.socket.on("session_confirm", function (session) {
      var id = session && typeof session === "object" ? session.session_id : session;
      if (id !== self.sessionId) {
        // A new session (first visit, "new chat", or a session the server no longer knows): start clean.
        self.history = [];
        self.log.textContent = "";
        self.pendingGreet = true;
        self.sendLocale = true;
      }
      self.sessionId = id;
      self.sessionToken = session && typeof session === "object" ? session.session_token : null;
      storageSet("session", { id: self.sessionId, token: self.sessionToken });
      self.setStatus(self.t.connected, "connected");
      if (self.pendingGreet) {
        self.pendingGreet = false;
        self.greet();
      }
    });
    this.socket.on("bot_uttered", function (message) { self.receive(message); });
    this.socket.on("dataset_masked", function (offer) { self.offerMasked(offer); });
    this.socket.on("session_history", function (entries) {
      // The resumed conversation as the server keeps it (personal data masked); drawn once per page.
      if (!Array.isArray(entries) || self.history.length) return;
      self.history = entries.filter(function (e) { return e && (e.from === "user" || e.from === "bot"); })
        .slice(-HISTORY_LIMIT);
      self.restore();
    });
    this.socket.on("disconnect", function (reason) {
      if (reason !== "io client disconnect") self.setStatus(self.t.reconnecting, "reconnecting");
    });
    this.socket.io.on("reconnect_attempt", function () { self.setStatus(self.t.reconnecting, "reconnecting"); });
    this.socket.on("connect_error", function () { self.setStatus(self.t.reconnecting, "reconnecting"); });
  };

  function socketSettings(root) {
    var path = root.getAttribute("data-socket-path") || "/socket.io";
    var given = root.getAttribute("data-socket-url");
    var fallback = BASE.protocol + "//" + BASE.hostname + ":5005";
    if (given) return Promise.resolve({ url: given, path: path });
    return fetch(new URL("config.json", BASE).href)
      .then(function (r) { return r.ok ? r.json() : {}; })
      .catch(function () { return {}; })
      .then(function (cfg) { return { url: cfg.socketUrl || fallback, path: cfg.socketPath || path }; });
  }

  function start() {
    var roots = document.querySelectorAll("#gpu-advisor-chat, [data-gpu-advisor]");
    if (!roots.length) return;
    loadStyle(new URL("widget.css", BASE).href);
    var ready = window.io ? Promise.resolve() : loadScript(new URL("vendor/socket.io.min.js", BASE).href);
    Array.prototype.forEach.call(roots, function (root) {
      if (root.gpuAdvisor) return;
      var widget = new Widget(root, {});
      root.gpuAdvisor = widget;
      Promise.all([ready, socketSettings(root)]).then(function (results) {
        widget.connect(window.io, results[1].url, results[1].path);
      }).catch(function (error) {
        widget.setStatus(widget.t.reconnecting, "error");
        if (window.console) console.error("gpu-advisor widget:", error);
      });
    });
  }

  window.GpuAdvisorWidget = { textDirection: textDirection, messageLanguage: messageLanguage, start: start,
                              texts: UI_TEXT };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

// Automations (#/automations): prompts that run on a schedule, each run a turn on a channel's
// conversation. The list (newest first, paged by `next`), a create form, pause and resume, an edit
// of the name, schedule, prompt and channel (PATCH, only what changed), a delete after a confirm,
// and each automation's recorded runs (slot, status, error, and its conversation when it has one).
import { ApiError, api, plainError } from "../api.js";
import { h, replace } from "../dom.js";
import { errorLine } from "../render.js";
import {
  clearInvalid,
  confirmGroup,
  field,
  firstEmpty,
  inFormWords,
  inUtc,
  oneAtATime,
  pagedList,
  when,
} from "./fields.js";

const SCHEDULE_HINT =
  "Five-field cron in UTC (minute hour day-of-month month day-of-week), such as 0 9 * * 1-5 for 09:00 UTC on weekdays, or @hourly, @daily, @weekly, @monthly.";
const CHANNEL_HINT =
  "Pick one of your channels from the list, or type a new name: letters, digits and . _ - (a letter or digit first, at most 64). Each run is a turn on this channel's conversation.";
// The API's rule for a channel name (CHANNEL_NAME in routes/channels.ts): a name outside it is
// refused on the field by the API, so the page only says "new channel" of one it would take.
const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
// Channels read for the list, at most: past that a typed name is taken without a word.
const CHANNEL_PAGES = 4;
const PAGE = 20;
const RUNS_PAGE = 20;

/** What went wrong; a 404 here is the automation (deleted elsewhere), not a conversation. @param {unknown} err */
const said = (err) =>
  err instanceof ApiError && err.type === "not_found"
    ? "This automation no longer exists (it was deleted elsewhere)."
    : plainError(err).text;

/** @param {string} id */
const at = (id) => `/v1/automations/${encodeURIComponent(id)}`;

/**
 * @param {HTMLElement} root
 * @param {AbortSignal} [signal] aborted once the person has gone on to another view: this one draws no more
 */
export async function automationsView(root, signal) {
  document.title = "Automations · context-chat";
  const list = h("ul", { class: "items", id: "automations" });
  const empty = h("p", { class: "muted", id: "automations-empty", hidden: true }, "No automations yet.");
  const listStatus = h("div", { role: "status", id: "automations-status" });
  const more = /** @type {HTMLButtonElement} */ (
    h("button", { type: "button", class: "secondary", id: "automations-more", hidden: true }, "Load more")
  );
  const heading = h("h2", { id: "automations-heading" }, "Scheduled");
  /** After a delete, the focus goes to the next automation's first control, or the list's heading. @param {Element | null} next */
  const focusAfter = (next) => {
    const target = /** @type {HTMLElement | null} */ (next?.querySelector(".auto-toggle") ?? null);
    if (target) return target.focus();
    heading.setAttribute("tabindex", "-1");
    heading.focus();
  };
  const channels = channelCatalogue(signal);
  /** @param {any} a */
  const itemOf = (a) => {
    // An automation's channel may not exist yet (its first run starts it): offered all the same,
    // so a second automation on it is picked, not typed again.
    channels.offer(a.channel);
    return automationItem(a, {
      channels,
      deleted: (li, name) => {
        const next = li.nextElementSibling ?? li.previousElementSibling;
        li.remove();
        empty.hidden = list.children.length > 0;
        replace(listStatus, `Deleted “${name}”.`);
        focusAfter(next);
      },
    });
  };
  const form = createForm({
    channels,
    created: (a) => {
      list.prepend(itemOf(a));
      empty.hidden = true;
    },
  });
  replace(
    root,
    h(
      "div",
      { class: "home manage-view" },
      h("h1", null, "Automations"),
      h(
        "p",
        { class: "muted" },
        "Prompts that run on a schedule: each run is a turn on a channel's conversation, recorded under its automation.",
      ),
      form,
      h(
        "section",
        { class: "panel", "aria-labelledby": "automations-heading" },
        heading,
        listStatus,
        empty,
        list,
        more,
      ),
    ),
  );

  await pagedList({
    path: "/v1/automations",
    limit: PAGE,
    list,
    more,
    status: listStatus,
    empty,
    item: itemOf,
    said,
    // Load more gone with the last page: the focus goes to the first automation it brought.
    focusFirst: focusAfter,
    signal,
  });
}

/**
 * The channels the Channel fields offer: the tenant's (read from GET /v1/channels) and the ones its
 * automations post to, in one <datalist> that the create form holds and every Edit's field points
 * to. A name that is none of them is said under a field as a new channel, so a typo shows before it
 * makes an automation post where nobody reads.
 * @param {AbortSignal} [signal]
 */
function channelCatalogue(signal) {
  const list = h("datalist", { id: "auto-channel-list" });
  /** @type {Set<string>} */
  const known = new Set();
  // Until every channel is read (or when reading failed), an unknown name may still be a channel.
  let complete = false;
  /** Whether the name is one the page knows no channel by, when it can tell. @param {string} name */
  const isNew = (name) => complete && CHANNEL_NAME.test(name) && !known.has(name);
  /** @param {string} name */
  const offer = (name) => {
    if (known.has(name)) return;
    known.add(name);
    // In the API's order (by name), so the list reads as GET /v1/channels does.
    const after = [...list.children].find((o) => (o.getAttribute("value") ?? "") > name);
    list.insertBefore(h("option", { value: name }), after ?? null);
  };
  const read = async () => {
    let cursor = "";
    for (let page = 0; page < CHANNEL_PAGES; page++) {
      const r = await api("GET", `/v1/channels?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      if (signal?.aborted) return;
      for (const ch of r.data) offer(ch.name);
      if (!r.next) {
        complete = true;
        return;
      }
      cursor = r.next;
    }
  };
  // Not awaited: the forms are usable at once. Unread (a failure), a field takes a typed name as it
  // always did, with nothing said of it.
  const ready = read().catch(() => undefined);
  /**
   * A Channel field: its input (pointing to the list), its hint and the note a new name gets.
   * @param {{ id: string, name?: string, value?: string }} o
   */
  const channelField = ({ id, name, value }) => {
    const input = /** @type {HTMLInputElement} */ (
      h("input", { id, name, list: list.id, autocomplete: "off", spellcheck: "false", value })
    );
    // "text" wraps a long unbroken name at any point, not the page sideways on a phone.
    const note = h("span", { class: "field-hint text", id: `${id}-note`, hidden: true });
    const wrap = field("Channel", input, CHANNEL_HINT);
    wrap.append(note);
    input.setAttribute("aria-describedby", `${input.id}-hint ${note.id}`);
    const say = () => {
      const typed = input.value.trim();
      const like = [...known].find((k) => k.toLowerCase() === typed.toLowerCase());
      const text = !isNew(typed)
        ? ""
        : like
          ? `New channel: none is named “${typed}” yet (“${like}” is, and capitals count); the first run starts it.`
          : `New channel: none is named “${typed}” yet; the first run starts it.`;
      replace(note, text);
      note.hidden = !text;
    };
    input.addEventListener("input", say);
    // A name typed before the list was read is judged once it is.
    ready.then(say);
    return {
      input,
      wrap,
      /** After the form's reset: nothing typed, nothing said. */
      cleared: say,
    };
  };
  return { list, offer, isNew, field: channelField };
}

/**
 * The create form.
 * @param {{ channels: ReturnType<typeof channelCatalogue>, created: (a: any) => void }} opts
 */
function createForm({ channels, created }) {
  const picked = channels.field({ id: "auto-channel", name: "channel" });
  // The one list every Channel field points to lives here, in the form that is always drawn.
  picked.wrap.append(channels.list);
  const name = h("input", { id: "auto-name", name: "name", maxlength: "100", autocomplete: "off", dir: "auto" });
  const schedule = h("input", {
    id: "auto-schedule",
    name: "schedule",
    autocomplete: "off",
    spellcheck: "false",
  });
  const prompt = h("textarea", { id: "auto-prompt", name: "prompt", rows: "4", dir: "auto" });
  const channel = picked.input;
  const paused = /** @type {HTMLInputElement} */ (h("input", { id: "auto-paused", type: "checkbox" }));
  const status = h("div", { role: "status", id: "automation-form-status" });
  const submit = h("button", { type: "submit", class: "primary", id: "automation-create" }, "Create");
  /** @type {import("./fields.js").Labelled} */
  const fields = new Map([
    ["name", { label: "Name", input: name }],
    ["schedule", { label: "Schedule", input: schedule }],
    ["prompt", { label: "Prompt", input: prompt }],
    ["channel", { label: "Channel", input: channel }],
    ["paused", { label: "Start paused", input: paused }],
  ]);
  const form = /** @type {HTMLFormElement} */ (
    h(
      "form",
      { class: "panel settings-form", id: "automation-form", "aria-labelledby": "automation-form-heading" },
      h("h2", { id: "automation-form-heading" }, "New automation"),
      field("Name", name),
      field("Schedule", schedule, SCHEDULE_HINT),
      field("Prompt", prompt, "Sent as the turn's message on every run."),
      picked.wrap,
      h("label", { class: "check" }, paused, " Start paused"),
      h("div", { class: "form-actions" }, submit),
      status,
    )
  );
  const send = oneAtATime(submit, async () => {
    clearInvalid(fields);
    const missing = firstEmpty(fields, ["name", "schedule", "prompt", "channel"]);
    if (missing) return void replace(status, errorLine(`Fill in “${missing}”: nothing was created.`));
    const v = (/** @type {HTMLElement} */ el) => /** @type {HTMLInputElement} */ (el).value;
    const body = {
      name: v(name).trim(),
      schedule: v(schedule),
      prompt: v(prompt),
      channel: v(channel).trim(),
      ...(paused.checked ? { paused: true } : {}),
    };
    const fresh = channels.isNew(body.channel);
    replace(status, h("span", { class: "muted" }, "Creating…"));
    try {
      const a = await api("POST", "/v1/automations", body);
      created(a);
      form.reset();
      picked.cleared();
      const where = fresh ? ` on the new channel “${a.channel}”` : "";
      replace(
        status,
        a.paused
          ? `Created “${a.name}”${where}, paused: it runs once resumed.`
          : `Created “${a.name}”${where}: it runs at its next slot (${a.schedule}, UTC).`,
      );
    } catch (err) {
      replace(status, errorLine(inFormWords(said(err), fields)));
    }
  });
  form.addEventListener("submit", (e) => (e.preventDefault(), send()));
  return form;
}

/**
 * One automation in the list: what it is, its actions, and its runs (loaded when opened).
 * @param {any} initial
 * @param {{ channels: ReturnType<typeof channelCatalogue>, deleted: (li: HTMLElement, name: string) => void }} opts
 */
function automationItem(initial, { channels, deleted }) {
  let a = initial;
  const id = a.id;
  const li = h("li", { class: "item automation", "data-id": id });
  const info = h("div", { class: "item-info" });
  const status = h("div", { class: "item-status", role: "status" });
  const runs = h("div", { class: "runs", id: `runs-${id}`, hidden: true });
  const toggle = h("button", { type: "button", class: "small secondary auto-toggle" });
  const edit = h("button", { type: "button", class: "small secondary auto-edit" }, "Edit");
  const showRuns = h(
    "button",
    { type: "button", class: "small secondary auto-runs", "aria-expanded": "false", "aria-controls": runs.id },
    "Runs",
  );
  const del = h("button", { type: "button", class: "small ghost auto-delete" }, "Delete");
  const actions = h("div", { class: "item-actions" }, toggle, edit, showRuns, del);

  const draw = () => {
    replace(
      info,
      h(
        "div",
        { class: "item-head" },
        h("h3", { class: "item-name", dir: "auto" }, a.name),
        h("span", { class: `badge ${a.paused ? "off" : "on"}` }, a.paused ? "Paused" : "Active"),
      ),
      h(
        "p",
        { class: "item-meta" },
        "Schedule ",
        h("code", { class: "schedule" }, a.schedule),
        " (UTC) · channel ",
        h("code", null, a.channel),
        a.expiresAt ? [" · runs until ", when(a.expiresAt), " (its key's expiry)"] : null,
      ),
      h("p", { class: "item-prompt", dir: "auto" }, a.prompt),
    );
    toggle.textContent = a.paused ? "Resume" : "Pause";
    toggle.setAttribute("aria-label", `${a.paused ? "Resume" : "Pause"} ${a.name}`);
    edit.setAttribute("aria-label", `Edit ${a.name}`);
    showRuns.setAttribute("aria-label", `Runs of ${a.name}`);
    del.setAttribute("aria-label", `Delete ${a.name}`);
  };
  draw();
  replace(li, info, actions, status, runs);

  toggle.addEventListener(
    "click",
    oneAtATime(toggle, async () => {
      try {
        a = await api("POST", `${at(id)}/${a.paused ? "resume" : "pause"}`);
        draw();
        replace(status, a.paused ? "Paused." : "Resumed: it runs from its next slot.");
      } catch (err) {
        replace(status, errorLine(said(err)));
      }
    }),
  );

  edit.addEventListener("click", () => {
    const name = h("input", { id: `edit-name-${id}`, maxlength: "100", dir: "auto", value: a.name });
    const schedule = h("input", { id: `edit-schedule-${id}`, spellcheck: "false", value: a.schedule });
    const prompt = /** @type {HTMLTextAreaElement} */ (
      h("textarea", { id: `edit-prompt-${id}`, rows: "4", dir: "auto" })
    );
    prompt.value = a.prompt;
    // The create form's Channel field: the same list, hint and word on a new name.
    const picked = channels.field({ id: `edit-channel-${id}`, value: a.channel });
    const channel = picked.input;
    /** @type {import("./fields.js").Labelled} */
    const fields = new Map([
      ["name", { label: "Name", input: name }],
      ["schedule", { label: "Schedule", input: schedule }],
      ["prompt", { label: "Prompt", input: prompt }],
      ["channel", { label: "Channel", input: channel }],
    ]);
    // Cancel, Escape or a Save puts the automation back with the focus on its Edit, where it was.
    const done = () => {
      editor.replaceWith(info, actions);
      edit.focus();
    };
    const save = h("button", { type: "submit", class: "small primary" }, "Save");
    const editor = /** @type {HTMLFormElement} */ (
      h(
        "form",
        { class: "settings-form item-edit", "aria-label": `Edit ${a.name}` },
        field("Name", name),
        field("Schedule", schedule, SCHEDULE_HINT),
        field("Prompt", prompt),
        picked.wrap,
        h(
          "div",
          { class: "form-actions" },
          h("button", { type: "button", class: "small ghost", onclick: done }, "Cancel"),
          save,
        ),
      )
    );
    editor.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.stopPropagation();
        done();
      }
    });
    const send = oneAtATime(save, async () => {
      clearInvalid(fields);
      const missing = firstEmpty(fields, ["name", "schedule", "prompt", "channel"]);
      if (missing) return void replace(status, errorLine(`Fill in “${missing}”: nothing was saved.`));
      /** @type {Record<string, string>} */
      const change = {};
      const value = (/** @type {HTMLElement} */ el) => /** @type {HTMLInputElement} */ (el).value;
      if (value(name).trim() !== a.name) change.name = value(name).trim();
      if (value(schedule).trim() !== a.schedule) change.schedule = value(schedule);
      if (value(prompt).trim() !== a.prompt) change.prompt = value(prompt);
      if (value(channel).trim() !== a.channel) change.channel = value(channel).trim();
      if (!Object.keys(change).length) {
        done();
        return void replace(status, "Nothing changed.");
      }
      const before = a.channel;
      const fresh = change.channel !== undefined && channels.isNew(change.channel);
      try {
        a = await api("PATCH", at(id), change);
        channels.offer(a.channel);
        draw();
        done();
        // A moved automation's next runs are turns on the new channel's conversation (the first of
        // them starts one when the channel has none); what ran before stays in the old one's.
        const moved =
          a.channel === before
            ? ""
            : `: its runs now go to ${fresh ? "the new channel " : ""}“${a.channel}”; earlier runs stay in “${before}”'s conversation`;
        replace(status, `Saved${moved}.`);
      } catch (err) {
        replace(status, errorLine(inFormWords(said(err), fields)));
      }
    });
    editor.addEventListener("submit", (e) => (e.preventDefault(), send()));
    replace(status);
    info.replaceWith(editor);
    actions.remove();
    name.focus();
  });

  showRuns.addEventListener("click", () => {
    const open = runs.hidden;
    runs.hidden = !open;
    showRuns.setAttribute("aria-expanded", String(open));
    if (open) loadRuns(id, runs);
  });

  del.addEventListener("click", () => {
    // Keep (or Escape) puts the actions back with the focus on Delete, where it was.
    const keep = () => {
      confirm.replaceWith(actions);
      del.focus();
    };
    const yes = h("button", { type: "button", class: "small danger confirm-delete" }, "Delete");
    const confirm = confirmGroup({
      label: "Confirm delete",
      question: "Delete this automation and its recorded runs? ",
      yes,
      keep,
    });
    yes.addEventListener(
      "click",
      oneAtATime(yes, async () => {
        try {
          await api("DELETE", at(id));
          deleted(li, a.name);
        } catch (err) {
          keep();
          replace(status, errorLine(said(err)));
        }
      }),
    );
    actions.replaceWith(confirm);
    yes.focus();
  });
  return li;
}

/**
 * The automation's recorded runs, newest first, a page at a time.
 * @param {string} id @param {HTMLElement} box
 */
async function loadRuns(id, box) {
  const list = h("ul", { class: "runs-list" });
  const more = /** @type {HTMLButtonElement} */ (
    h("button", { type: "button", class: "small secondary runs-more", hidden: true }, "Load more runs")
  );
  const status = h("div", { role: "status", class: "runs-status" }, h("span", { class: "muted" }, "Loading runs…"));
  replace(box, h("h4", null, "Runs"), status, list, more);
  /** @param {string | undefined} cursor */
  const page = async (cursor) => {
    const hadFocus = document.activeElement === more;
    const before = list.children.length;
    try {
      const r = await api(
        "GET",
        `${at(id)}/runs?limit=${RUNS_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      for (const run of r.data) list.append(runItem(run));
      replace(status, list.children.length ? "" : h("span", { class: "muted" }, "No runs yet."));
      more.hidden = !r.next;
      more.onclick = oneAtATime(more, () => page(r.next));
    } catch (err) {
      replace(status, errorLine(said(err)));
    }
    // Load more gone with the last page: the focus goes to the runs it brought, not the top of the page.
    if (hadFocus && more.hidden) {
      const target = /** @type {HTMLElement} */ (list.children[before] ?? box.querySelector("h4"));
      target.setAttribute("tabindex", "-1");
      target.focus();
    }
  };
  await page(undefined);
}

/** @param {any} run */
function runItem(run) {
  return h(
    "li",
    { class: `run ${run.status}` },
    h("span", { class: "run-slot" }, inUtc(run.slot)),
    " ",
    h("span", { class: `badge run-status ${run.status}` }, run.status),
    run.attempts > 1 ? h("span", { class: "muted" }, ` ${run.attempts} attempts`) : null,
    run.stopReason && run.status !== "succeeded" ? h("span", { class: "muted" }, ` (${run.stopReason})`) : null,
    run.conversationId
      ? [" ", h("a", { href: `#/c/${run.conversationId}`, class: "run-conversation" }, "Open the conversation")]
      : null,
    run.error ? h("p", { class: "run-error" }, run.error) : null,
  );
}

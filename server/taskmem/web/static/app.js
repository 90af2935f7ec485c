// The page shell: the key form, the router (#/tasks, #/task/<id>, #/knowledge, #/search) and the
// rule that a call refused for its key leaves nothing of the namespace on screen.

import { onAuthError, session } from "./api.js";
import { h, replace } from "./dom.js";
import * as knowledge from "./knowledge.js";
import { liveIndicator } from "./live.js";
import * as search from "./search.js";
import * as task from "./task.js";
import * as tasks from "./tasks.js";

const main = document.getElementById("main");
const notice = document.getElementById("auth-notice");
const keyInput = document.getElementById("key-input");
const namespaceInput = document.getElementById("namespace-input");
let page = null;

function route() {
  const hash = location.hash.replace(/^#\/?/, "") || "tasks";
  const [path, queryString] = hash.split("?");
  const [name, ...rest] = path.split("/");
  const params = Object.fromEntries(new URLSearchParams(queryString || ""));
  if (name === "task" && rest.length) return [task, { ...params, id: decodeURIComponent(rest.join("/")) }, "tasks"];
  if (name === "knowledge") return [knowledge, params, "knowledge"];
  if (name === "search") return [search, params, "search"];
  return [tasks, params, "tasks"];
}

function show() {
  page?.stop();
  notice.hidden = true;
  delete main.dataset.ready;
  liveIndicator("", "idle");
  const [module, params, navName] = route();
  document.querySelectorAll("header nav a").forEach((a) => a.setAttribute("aria-current", a.dataset.page === navName ? "page" : "false"));
  page = module.render(main, params);
}

onAuthError((error) => {
  page?.stop();
  page = null;
  replace(main, h("p", { class: "muted" }, "Enter an API key above to see this server's tasks."));
  notice.textContent = `${error.code}: ${error.message}`;
  notice.hidden = false;
  liveIndicator("", "idle");
  keyInput.focus();
});

document.getElementById("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  session.save(keyInput.value.trim(), namespaceInput.value.trim());
  keyInput.value = "";
  keyInput.placeholder = session.key ? "saved for this tab" : "none";
  show();
});
document.getElementById("forget-key").addEventListener("click", () => {
  session.save("", "");
  keyInput.placeholder = "none";
  namespaceInput.value = "";
  show();
});

keyInput.placeholder = session.key ? "saved for this tab" : "none";
namespaceInput.value = session.namespace;
window.addEventListener("hashchange", () => { show(); main.focus({ preventScroll: true }); });
show();

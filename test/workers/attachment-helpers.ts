// Shared by the attachment tests: an upload through the API, and the text of a turn's tool result.
import { api, turnMessages } from "./helpers";
import { ofType } from "../blocks";

export async function upload(id: string, name: string, body: BodyInit, type: string, key?: string) {
  return api("POST", `/v1/conversations/${id}/attachments?name=${encodeURIComponent(name)}`, body, {
    key,
    raw: true,
    headers: { "content-type": type },
  });
}

export const toolText = (r: { text: string }, i = 0) => {
  const c = ofType(turnMessages(r)[2].content[i], "tool_result").content;
  return typeof c === "string" ? c : c.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("\n");
};

// Which of a stream's own parameters (its \`params\` option) go with which of its requests.

type Params = Readonly<Record<string, unknown>>;

/** The topic a stream writes into, for its drafts (its sends get every parameter). */
export function threadParamsOf(params: Params): Record<string, unknown> {
  const thread = params.message_thread_id;
  return thread === undefined ? {} : { message_thread_id: thread };
}

/** The message an edit of a stream's progress message targets, with the parameters it keeps. */
export function editTargetOf(params: Params, messageId: number): Record<string, unknown> {
  const { link_preview_options: preview, reply_markup: markup } = params;
  return {
    message_id: messageId,
    ...(preview === undefined ? {} : { link_preview_options: preview }),
    ...(markup === undefined ? {} : { reply_markup: markup }),
  };
}

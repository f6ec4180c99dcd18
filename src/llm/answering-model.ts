/**
 * The model a provider says answered, against the one asked for. A server that has one model loaded
 * (llama-server, LM Studio) answers as that model whatever name it is asked for; jp records what
 * answered and says so once when it is another model. A dated snapshot (`gpt-4.1-mini` answered as
 * `gpt-4.1-mini-2025-04-14`), a tag (`llama3` as `llama3:latest`) or a file path ending in the name
 * asked for are the same model.
 */
export function isOtherModel(asked: string, answered: string): boolean {
  const normal = (name: string): string => name.trim().toLowerCase();
  const wanted = normal(asked);
  const said = normal(answered);
  if (wanted === '' || said === '') return false;
  const base = said.slice(said.lastIndexOf('/') + 1);
  return ![said, base].some((name) => name.startsWith(wanted) || wanted.startsWith(name));
}

/** The model name a `<provider>/<model>` id asks for. */
export function askedModel(id: string): string {
  return id.slice(id.indexOf('/') + 1);
}

/** The warning of a response from another model than the one asked for. */
export function otherModelWarning(id: string, answered: string): string {
  const provider = id.includes('/') ? id.slice(0, id.indexOf('/')) : id;
  return (
    `asked for the model "${askedModel(id)}", but ${provider} answered as "${answered}" ` +
    '(a local server answers with the model it has loaded, whatever the name asked for); ' +
    `name it with -m ${provider}/${answered}`
  );
}

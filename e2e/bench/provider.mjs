// The model provider, set in Settings as a person does, for the bench
// scripts that talk to hearth-fake-model; then back to the chat.
export async function setProvider(page, serve, model, name) {
  await page.goto(`${serve.url}/#/settings`);
  const panel = page.locator('.provider-panel');
  await panel.getByLabel('Provider').selectOption('custom-openai');
  await panel.getByLabel('Base URL').fill(model.base);
  await panel.getByRole('button', { name: 'Test connection' }).click();
  await panel.locator('.check.ok').waitFor();
  await panel.getByLabel('Model', { exact: true }).selectOption(name);
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.locator('.notice').filter({ hasText: 'Saved' }).waitFor();
  await page.goto(`${serve.url}/#/chat`);
  await page.getByRole('textbox', { name: 'Message or command' }).waitFor();
}

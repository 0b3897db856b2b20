/** What both React pages share: the config the test injects, and the state they mirror on `window.page`. */
interface PageConfig {
  publishableKey: string;
  apiBaseUrl: string;
  user: { id: string; [key: string]: string | number };
  company: { id: string; [key: string]: string | number };
}

interface PageWindow {
  CONFIG: PageConfig;
  page: Record<string, unknown> & { renders: number; prompts: { question: string; promptId: string; featureId: string }[] };
}

const pageWindow = window as unknown as PageWindow;
pageWindow.page = { renders: 0, prompts: [] };

export const config = pageWindow.CONFIG;

export function report(fields: Record<string, unknown>): void {
  Object.assign(pageWindow.page, fields);
  pageWindow.page.renders++;
}

/** The automated feedback handler: records the prompt and answers it. */
export function recordPrompt(
  prompt: { question: string; promptId: string; featureId: string },
  handlers: { reply(reply: { score?: number; comment?: string } | null): Promise<unknown> },
): void {
  pageWindow.page.prompts.push({ question: prompt.question, promptId: prompt.promptId, featureId: prompt.featureId });
  void handlers.reply({ score: 3, comment: "Asked from React" });
}

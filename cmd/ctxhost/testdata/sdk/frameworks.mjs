// A tool-using agent loop on an agent framework, as a new user would write
// it, unmodified except for its base URL: the framework runs the loop (or,
// for LangChain's chat models, a loop of a few lines around them).
//
//   node --import ./guard.mjs frameworks.mjs CASE BASE_URL TASK_ID MAX_TURNS
//
// CASE is one of the keys of `cases` below: the Vercel AI SDK (ai-...),
// LangChain.js (lc-...), a LangGraph ReAct agent (langgraph-...) and the
// OpenAI Agents SDK (agents-...), each on the endpoint its name says. The
// model reads files with read_file until it stops calling tools; the loop
// prints one JSON line: {"turns": model answers seen, "tool_calls",
// "paths": each call's path in order, "ids": each answer's id, "final"};
// any error exits non-zero with the error on stderr.
import { z } from 'zod';
import { SYSTEM, description, readFile, task } from './repo.mjs';

const [name, baseURL, taskID, maxTurnsArg] = process.argv.slice(2);
const maxTurns = Number(maxTurnsArg || 40) + 5;
const apiKey = process.env.STANDIN_API_KEY;
const TASK = task(taskID);
const pathSchema = z.object({ path: z.string().describe('path relative to the repository root') });

const paths = [];
// read is every framework's read_file tool.
function read({ path }) {
  paths.push(path);
  return readFile(path);
}

// Vercel AI SDK: generateText or streamText runs the whole loop.
async function aiSDK(model, stream) {
  const { generateText, streamText, tool, stepCountIs } = await import('ai');
  const options = {
    model, system: SYSTEM, prompt: TASK, maxRetries: 0, maxOutputTokens: 512,
    tools: { read_file: tool({ description, inputSchema: pathSchema, execute: async (args) => read(args) }) },
    stopWhen: stepCountIs(maxTurns),
  };
  let steps, text;
  if (stream) {
    const res = streamText({ ...options, onError: ({ error }) => { throw error; } });
    await res.consumeStream({ onError: (error) => { throw error; } });
    [steps, text] = [await res.steps, await res.text];
  } else {
    ({ steps, text } = await generateText(options));
  }
  return { turns: steps.length, ids: steps.map((s) => s.response.id), final: text };
}

async function aiOpenAI() {
  const { createOpenAI } = await import('@ai-sdk/openai');
  return createOpenAI({ apiKey, baseURL: `${baseURL}/v1` });
}

async function aiAnthropic() {
  const { createAnthropic } = await import('@ai-sdk/anthropic');
  // The AI SDK's Anthropic provider posts to {baseURL}/messages.
  return createAnthropic({ apiKey, baseURL: `${baseURL}/v1` });
}

// LangChain.js chat models: the loop of LangChain's tool-calling guide,
// every other turn streamed.
async function langchain(model) {
  const { tool } = await import('@langchain/core/tools');
  const { SystemMessage, HumanMessage } = await import('@langchain/core/messages');
  const readTool = tool(async (args) => read(args), { name: 'read_file', description, schema: pathSchema });
  const bound = model.bindTools([readTool]);
  const messages = [new SystemMessage(SYSTEM), new HumanMessage(TASK)];
  const ids = [];
  for (let turn = 1; turn <= maxTurns; turn++) {
    let msg;
    if (turn % 2 === 0) {
      for await (const chunk of await bound.stream(messages)) msg = msg ? msg.concat(chunk) : chunk;
    } else {
      msg = await bound.invoke(messages);
    }
    messages.push(msg);
    ids.push(msg.id);
    if (!msg.tool_calls?.length) return { turns: turn, ids, final: textOf(msg.content) };
    for (const call of msg.tool_calls) messages.push(await readTool.invoke(call));
  }
  throw new Error('the model never stopped calling tools');
}

// textOf is a LangChain message content's text.
function textOf(content) {
  if (typeof content === 'string') return content;
  return content.map((part) => part.text ?? '').join('');
}

async function chatOpenAI(fields = {}) {
  const { ChatOpenAI } = await import('@langchain/openai');
  return new ChatOpenAI({ model: 'gpt-4o', apiKey, maxRetries: 0, maxTokens: 512, configuration: { baseURL: `${baseURL}/v1` }, ...fields });
}

async function chatAnthropic() {
  const { ChatAnthropic } = await import('@langchain/anthropic');
  return new ChatAnthropic({ model: 'claude-haiku-4-5', apiKey, maxRetries: 0, maxTokens: 512, anthropicApiUrl: baseURL });
}

// LangGraph's prebuilt ReAct agent runs the loop; its state merges
// messages by id, so answers that share an id collapse into one.
async function langgraph(model, stream) {
  const { createReactAgent } = await import('@langchain/langgraph/prebuilt');
  const { tool } = await import('@langchain/core/tools');
  const readTool = tool(async (args) => read(args), { name: 'read_file', description, schema: pathSchema });
  const agent = createReactAgent({ llm: model, tools: [readTool], prompt: SYSTEM });
  const input = { messages: [{ role: 'user', content: TASK }] };
  const config = { recursionLimit: 2 * maxTurns + 1 };
  let state;
  if (stream) {
    for await (const [mode, value] of await agent.stream(input, { ...config, streamMode: ['values', 'messages'] })) {
      if (mode === 'values') state = value;
    }
  } else {
    state = await agent.invoke(input, config);
  }
  const answers = state.messages.filter((m) => m.getType() === 'ai');
  return { turns: answers.length, ids: answers.map((m) => m.id), final: textOf(answers.at(-1).content) };
}

// OpenAI Agents SDK: run() runs the loop; tracing is off (its exporter
// would post to OpenAI).
async function agentsSDK(api, stream) {
  const { default: OpenAI } = await import('openai');
  const { Agent, run, tool, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } = await import('@openai/agents');
  setTracingDisabled(true);
  setDefaultOpenAIClient(new OpenAI({ apiKey, baseURL: `${baseURL}/v1`, maxRetries: 0 }));
  setOpenAIAPI(api);
  const agent = new Agent({
    name: 'reader', instructions: SYSTEM, model: 'gpt-4.1', modelSettings: { maxTokens: 512 },
    tools: [tool({ name: 'read_file', description, parameters: pathSchema, execute: async (args) => read(args) })],
  });
  let result;
  if (stream) {
    result = await run(agent, TASK, { maxTurns, stream: true });
    for await (const _ of result); // eslint-disable-line no-unused-vars
    await result.completed;
    if (result.error) throw result.error;
  } else {
    result = await run(agent, TASK, { maxTurns });
  }
  const ids = result.rawResponses.map((r) => r.responseId);
  return { turns: ids.length, ids, final: String(result.finalOutput ?? '') };
}

const cases = {
  'ai-responses': async () => aiSDK((await aiOpenAI())('gpt-4o'), false), // the default: Responses, store on
  'ai-responses-stream': async () => aiSDK((await aiOpenAI())('gpt-4o'), true),
  'ai-chat': async () => aiSDK((await aiOpenAI()).chat('gpt-4o'), false),
  'ai-chat-stream': async () => aiSDK((await aiOpenAI()).chat('gpt-4o'), true),
  'ai-anthropic': async () => aiSDK((await aiAnthropic())('claude-haiku-4-5'), false),
  'ai-anthropic-stream': async () => aiSDK((await aiAnthropic())('claude-haiku-4-5'), true),
  'lc-chat': async () => langchain(await chatOpenAI()),
  'lc-responses': async () => langchain(await chatOpenAI({ useResponsesApi: true })),
  'lc-anthropic': async () => langchain(await chatAnthropic()),
  'langgraph-chat': async () => langgraph(await chatOpenAI(), false),
  'langgraph-chat-stream': async () => langgraph(await chatOpenAI({ streaming: true }), true),
  'agents-responses': async () => agentsSDK('responses', false),
  'agents-responses-stream': async () => agentsSDK('responses', true),
  'agents-chat': async () => agentsSDK('chat_completions', false),
};

if (!cases[name]) {
  console.error(`unknown case ${name} (want ${Object.keys(cases).join(', ')})`);
  process.exit(2);
}
try {
  const result = await cases[name]();
  console.log(JSON.stringify({ ...result, tool_calls: paths.length, paths }));
} catch (err) {
  console.error(`${name}: ${err?.constructor?.name ?? 'Error'}: ${err?.statusCode ?? err?.status ?? ''} ${err?.message ?? err}`);
  if (err?.responseBody) console.error(`response body: ${err.responseBody}`);
  process.exit(1);
}

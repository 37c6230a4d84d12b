// A tool-using agent loop on a provider's official SDK, unmodified except
// for its base URL (and, when the service has one, ctxhost's token header).
//
//   node agent.mjs PROVIDER BASE_URL TASK_ID MAX_TURNS
//
// PROVIDER: openai-chat, openai-responses, anthropic or gemini. Every
// other turn streams. The model reads files with read_file until it stops
// calling tools; the loop prints one JSON line: {"turns", "tool_calls",
// "final"}; any SDK error exits non-zero with the error on stderr.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { SYSTEM, description, parameters, readFile, task } from './repo.mjs';

const [provider, baseURL, taskID, maxTurnsArg] = process.argv.slice(2);
const maxTurns = Number(maxTurnsArg || 40) + 5;
const apiKey = process.env.STANDIN_API_KEY;
const headers = process.env.CTXHOST_TOKEN ? { 'Ctxhost-Token': process.env.CTXHOST_TOKEN } : undefined;
const TASK = task(taskID);

let toolCalls = 0;

async function openaiChat() {
  const client = new OpenAI({ apiKey, baseURL: `${baseURL}/v1`, maxRetries: 0, defaultHeaders: headers });
  const tools = [{ type: 'function', function: { name: 'read_file', description, parameters } }];
  const messages = [{ role: 'system', content: SYSTEM }, { role: 'user', content: TASK }];
  for (let turn = 1; turn <= maxTurns; turn++) {
    let msg;
    if (turn % 2 === 0) {
      const stream = client.chat.completions.stream({ model: 'gpt-4.1', messages, tools, max_tokens: 512, stream_options: { include_usage: true } });
      msg = (await stream.finalChatCompletion()).choices[0].message;
    } else {
      msg = (await client.chat.completions.create({ model: 'gpt-4.1', messages, tools, max_tokens: 512, temperature: 0.2 })).choices[0].message;
    }
    messages.push({ role: 'assistant', content: msg.content, tool_calls: msg.tool_calls });
    if (!msg.tool_calls || msg.tool_calls.length === 0) return { turns: turn, final: msg.content };
    for (const tc of msg.tool_calls) {
      toolCalls++;
      messages.push({ role: 'tool', tool_call_id: tc.id, content: readFile(JSON.parse(tc.function.arguments).path) });
    }
  }
  throw new Error('the model never stopped calling tools');
}

async function openaiResponses() {
  const client = new OpenAI({ apiKey, baseURL: `${baseURL}/v1`, maxRetries: 0, defaultHeaders: headers });
  const tools = [{ type: 'function', name: 'read_file', description, parameters, strict: false }];
  const input = [{ role: 'user', content: TASK }];
  for (let turn = 1; turn <= maxTurns; turn++) {
    const body = { model: 'gpt-4.1', instructions: SYSTEM, input, tools, max_output_tokens: 512, store: false };
    let res;
    if (turn % 2 === 0) {
      const stream = await client.responses.create({ ...body, stream: true });
      for await (const event of stream) {
        if (event.type === 'response.completed') res = event.response;
      }
      if (!res) throw new Error('the stream ended without response.completed');
    } else {
      res = await client.responses.create(body);
    }
    input.push(...res.output);
    const calls = res.output.filter((item) => item.type === 'function_call');
    if (calls.length === 0) {
      const texts = res.output.filter((item) => item.type === 'message').flatMap((item) => item.content.map((c) => c.text ?? ''));
      return { turns: turn, final: texts.join('') };
    }
    for (const c of calls) {
      toolCalls++;
      input.push({ type: 'function_call_output', call_id: c.call_id, output: readFile(JSON.parse(c.arguments).path) });
    }
  }
  throw new Error('the model never stopped calling tools');
}

async function anthropic() {
  const client = new Anthropic({ apiKey, baseURL, maxRetries: 0, defaultHeaders: headers });
  const tools = [{ name: 'read_file', description, input_schema: parameters }];
  const messages = [{ role: 'user', content: TASK }];
  for (let turn = 1; turn <= maxTurns; turn++) {
    const body = { model: 'claude-haiku-4-5', max_tokens: 512, system: SYSTEM, messages, tools };
    const msg = turn % 2 === 0 ? await client.messages.stream(body).finalMessage() : await client.messages.create(body);
    messages.push({ role: 'assistant', content: msg.content });
    const uses = msg.content.filter((b) => b.type === 'tool_use');
    if (uses.length === 0) return { turns: turn, final: msg.content.filter((b) => b.type === 'text').map((b) => b.text).join('') };
    toolCalls += uses.length;
    messages.push({ role: 'user', content: uses.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: readFile(u.input.path) })) });
  }
  throw new Error('the model never stopped calling tools');
}

async function gemini() {
  const ai = new GoogleGenAI({ apiKey, httpOptions: { baseUrl: baseURL, headers } });
  const config = { systemInstruction: SYSTEM, maxOutputTokens: 512, tools: [{ functionDeclarations: [{ name: 'read_file', description, parameters }] }] };
  const contents = [{ role: 'user', parts: [{ text: TASK }] }];
  for (let turn = 1; turn <= maxTurns; turn++) {
    let parts = [];
    if (turn % 2 === 0) {
      for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents, config })) {
        parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
      }
    } else {
      const res = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents, config });
      parts = res.candidates[0].content.parts;
    }
    contents.push({ role: 'model', parts });
    const calls = parts.filter((p) => p.functionCall);
    if (calls.length === 0) return { turns: turn, final: parts.map((p) => p.text ?? '').join('') };
    toolCalls += calls.length;
    contents.push({ role: 'user', parts: calls.map((p) => ({ functionResponse: { name: p.functionCall.name, response: { content: readFile(p.functionCall.args.path) } } })) });
  }
  throw new Error('the model never stopped calling tools');
}

const loops = { 'openai-chat': openaiChat, 'openai-responses': openaiResponses, anthropic, gemini };
if (!loops[provider]) {
  console.error(`unknown provider ${provider} (want ${Object.keys(loops).join(', ')})`);
  process.exit(2);
}
try {
  const result = await loops[provider]();
  console.log(JSON.stringify({ ...result, tool_calls: toolCalls }));
} catch (err) {
  console.error(`${provider}: ${err?.constructor?.name ?? 'Error'}: ${err?.status ?? ''} ${err?.message ?? err}`);
  process.exit(1);
}

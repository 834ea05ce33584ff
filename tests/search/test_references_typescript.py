"""find_references in TypeScript: re-exports, callbacks as scopes, contextual types.

Each test builds a small repository and its real index (both stores:
``store_url``) and reads ``find_references``'s reply: a name re-exported by
``export { x }`` and imported with a ``.ts`` extension; a local of one
callback that does not hide an imported name in another; a callback's
untyped parameters typed by where it stands (returned by a function
declaring its result, passed to a callee whose parameter is a rest of a
union of function-type aliases of another file, a member of a typed object
literal), and that object literal's members as uses of the interface's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from refs_replies import matched, uses

from repolens import service
from repolens.index.build import build_index


@pytest.fixture
def repo(tmp_path: Path, write_tree, store_url) -> Path:
    root = tmp_path / "repo"
    write_tree(root, {"README.md": "fixture\n"})
    return root


def test_an_imported_name_exported_again_and_imported_with_a_ts_extension(repo: Path, write_tree):
    write_tree(
        repo,
        {
            "deno/utils/html.ts": "export const raw = (s: string) => s\n",
            "deno/helper/html/index.ts": (
                "import { raw } from '../../utils/html.ts'\n"  # 1
                "\n"
                "export { raw }\n"
            ),
            "deno/jsx/base.ts": (
                "import { raw } from '../helper/html/index.ts'\n"  # 1
                "export function render() {\n"
                "  return raw('x')\n"
                "}\n"
            ),
        },
    )
    build_index(repo)
    assert uses(service.find_references("raw", repo).text) == [
        "deno/helper/html/index.ts",
        "(module) 1: import { raw } from '../../utils/html.ts'",
        "(module) 3: export { raw }",
        "deno/jsx/base.ts",
        "(module) 1: import { raw } from '../helper/html/index.ts'",
        "render 3: return raw('x')",
    ]


def test_a_callback_s_local_does_not_hide_an_imported_name_in_another_callback(repo: Path, write_tree):
    write_tree(
        repo,
        {
            "src/accepts.ts": "export function accepts(c: unknown): string {\n  return ''\n}\n",
            "src/accepts.test.ts": (
                "import { accepts } from './accepts'\n"  # 1
                "describe('a', () => {\n"
                "  const accepts = ['text/html']\n"
                "  expect(accepts).toEqual([])\n"
                "})\n"  # 5
                "describe('b', () => {\n"
                "  const result = accepts({})\n"
                "  test('c', (accepts: number) => accepts + 1)\n"
                "})\n"
            ),
        },
    )
    build_index(repo)
    assert uses(service.find_references("accepts", repo).text) == [
        "src/accepts.test.ts",
        "(module) 1: import { accepts } from './accepts'",
        "(module) 7: const result = accepts({})",
    ]


CONTEXT = {
    "src/request.ts": "export class Req {\n  header(name: string): string { return name }\n}\n",
    "src/context.ts": (
        "import { Req } from './request'\n"  # 1
        "export class Context {\n"
        "  req: Req\n"
        "  get res(): Response { return new Response() }\n"
        "  json(v: unknown): Response { return new Response() }\n"  # 5
        "}\n"
    ),
    "src/types.ts": (
        "import type { Context } from './context'\n"  # 1
        "export type Next = () => Promise<void>\n"
        "export type Handler<E = any> = (c: Context<E>, next: Next) => Response\n"
        "export type MiddlewareHandler<E = any> = (c: Context<E>, next: Next) => Promise<void>\n"
        "export type H<E = any> = Handler<E> | MiddlewareHandler<E>\n"  # 5
        "export type ErrorHandler = (err: Error, c: Context) => Response\n"
    ),
    "src/app.ts": (
        "import type { H, ErrorHandler } from './types'\n"  # 1
        "export class App {\n"
        "  get(path: string, ...handlers: H[]): App { return this }\n"
        "  onError(handler: ErrorHandler): App { return this }\n"
        "}\n"  # 5
    ),
}


def test_a_callback_s_parameters_typed_by_what_it_is_returned_from_or_passed_to(repo: Path, write_tree):
    write_tree(
        repo,
        {
            **CONTEXT,
            "src/mw.ts": (
                "import type { MiddlewareHandler } from './types'\n"  # 1
                "export const cors = (): MiddlewareHandler => {\n"
                "  return async function cors(c, next) {\n"
                "    c.req.header('origin')\n"
                "    c.res\n"  # 5
                "  }\n"
                "}\n"
                "export const logger = (): MiddlewareHandler => async (c) => c.res\n"
            ),
            "src/app.test.ts": (
                "import { App } from './app'\n"  # 1
                "describe('app', () => {\n"
                "  const app = new App()\n"
                "  app.get('/', (c) => c.json(1), (c, next) => c.res)\n"
                "  app.onError((err, c) => c.json(err))\n"  # 5
                "  app.get('/', (ctx) => ctx.json(2))\n"
                "  const other = (c) => c.json(3)\n"
                "})\n"
            ),
        },
    )
    build_index(repo)
    assert uses(service.find_references("Context.res", repo).text) == [
        "src/mw.ts",
        "cors 5: c.res",
        "logger 8: export const logger = (): MiddlewareHandler => async (c) => c.res",
        "src/app.test.ts",
        "(module) 4: app.get('/', (c) => c.json(1), (c, next) => c.res)",
    ]
    assert uses(service.find_references("Req.header", repo).text) == [
        "src/mw.ts",
        "cors 4: c.req.header('origin')",
    ]
    text = service.find_references("Context.json", repo).text
    assert uses(text) == [
        "src/app.test.ts",
        "(module) 4: app.get('/', (c) => c.json(1), (c, next) => c.res)",
        "(module) 5: app.onError((err, c) => c.json(err))",
        "(module) 6: app.get('/', (ctx) => ctx.json(2))",
    ]
    assert "c.json(3)" in matched(text)  # a callback typed by nothing: a name match


def test_an_object_literal_typed_by_an_interface_its_members_and_their_parameters(repo: Path, write_tree):
    write_tree(
        repo,
        {
            "src/transformer.ts": (
                "export interface DataTransformer {\n"  # 1
                "  serialize(object: any): any\n"
                "}\n"
                "export interface Combined {\n"
                "  output: DataTransformer\n"  # 5
                "  onError?: (err: DataTransformer) => void\n"
                "}\n"
            ),
            "src/config.ts": (
                "import type { Combined, DataTransformer } from './transformer'\n"  # 1
                "export const identity: DataTransformer = { serialize: (v) => v }\n"
                "export const combined = {\n"
                "  output: { serialize(v) { return v } },\n"
                "  onError: (t) => t.serialize(1),\n"  # 5
                "} satisfies Combined\n"
                "export function send(config: Combined) {\n"
                "  return config.output.serialize(2)\n"
                "}\n"
            ),
        },
    )
    build_index(repo)
    assert uses(service.find_references("DataTransformer.serialize", repo).text) == [
        "src/config.ts",
        "(module) 2: export const identity: DataTransformer = { serialize: (v) => v }",
        "(module) 4: output: { serialize(v) { return v } },",
        "(module) 5: onError: (t) => t.serialize(1),",
        "send 8: return config.output.serialize(2)",
    ]


def test_a_callback_passed_to_a_member_of_a_mapped_type_through_overloads_one_per_line(
    repo: Path, write_tree
):
    write_tree(
        repo,
        {
            **CONTEXT,
            "src/handlers.ts": (
                "import type { H, MiddlewareHandler } from './types'\n"  # 1
                "export interface HandlerInterface {\n"
                "  // app.get(handler)\n"
                "  <P extends string = string>(\n"
                "    handler: H\n"  # 5
                "  ): void\n"
                "\n"
                "  // app.get(path, ...handlers)\n"
                "  <P extends string = string>(\n"
                "    path: P,\n"  # 10
                "    ...handlers: H[]\n"
                "  ): void\n"
                "}\n"
                "export interface MiddlewareInterface {\n"
                "  (...handlers: MiddlewareHandler[]): void\n"  # 15
                "  (path: string, ...handlers: MiddlewareHandler[]): void\n"
                "}\n"
            ),
            "src/base.ts": (
                "import type { HandlerInterface, MiddlewareInterface } from './handlers'\n"  # 1
                "type Methods = 'get' | 'post'\n"
                "function defineDynamicClass(): {\n"
                "  new (): { [M in Methods]: HandlerInterface } & { use: MiddlewareInterface }\n"
                "} {\n"  # 5
                "  return class {} as never\n"
                "}\n"
                "export class Base extends defineDynamicClass() {}\n"
            ),
            "src/hono.ts": (
                "import { Base } from './base'\n"  # 1
                "export class Hono extends Base {}\n"
            ),
            "src/hono.test.ts": (
                "import { Hono } from './hono'\n"  # 1
                "const app = new Hono()\n"
                "app.get('/', (c) => c.res)\n"
                "app.post((c) => c.res)\n"
                "app.use('*', async (c, next) => c.res)\n"  # 5
                "app.use(async (c, next) => c.res)\n"
            ),
        },
    )
    build_index(repo)
    text = service.find_references("Context.res", repo).text
    assert uses(text) == [
        "src/hono.test.ts",
        "(module) 3: app.get('/', (c) => c.res)",
        "(module) 5: app.use('*', async (c, next) => c.res)",
    ]
    # a handler or a path: the overloads disagree on the first argument, so no type there
    assert "app.post" not in text
    assert "app.use(async" not in text


def test_what_a_call_returns_and_an_interface_s_property_of_a_function_type(repo: Path, write_tree):
    write_tree(
        repo,
        {
            "src/runner.ts": "export class PoolRunner {\n  off(event: string): void {}\n}\n",
            "src/pool.ts": (
                "import { PoolRunner } from './runner'\n"  # 1
                "export async function createRunner(): Promise<PoolRunner> {\n"
                "  return new PoolRunner()\n"
                "}\n"
                "export class Pool {\n"  # 5
                "  private getPoolRunner(): PoolRunner { return new PoolRunner() }\n"
                "  async run() {\n"
                "    const runner = this.getPoolRunner()\n"
                "    runner.off('message')\n"
                "    const other = await createRunner()\n"  # 10
                "    other.off('error')\n"
                "  }\n"
                "}\n"
            ),
            "src/env.ts": (
                "export interface Environment {\n"  # 1
                "  save: (path: string) => Promise<void>\n"
                "}\n"
            ),
            "src/node.ts": (
                "import type { Environment } from './env'\n"  # 1
                "export class NodeEnvironment implements Environment {\n"
                "  async save(path: string): Promise<void> {}\n"
                "}\n"
            ),
            "src/port.ts": (
                "import type { Environment } from './env'\n"  # 1
                "export async function keep(environment: Environment) {\n"
                "  await environment.save('a')\n"
                "}\n"
            ),
        },
    )
    build_index(repo)
    assert uses(service.find_references("PoolRunner.off", repo).text) == [
        "src/pool.ts",
        "Pool.run 9: runner.off('message')",
        "Pool.run 11: other.off('error')",
    ]
    assert uses(service.find_references("NodeEnvironment.save", repo).text) == [
        "src/env.ts",
        "Environment.save 2: save: (path: string) => Promise<void>",
        "src/port.ts",
        "keep 3: await environment.save('a')",
    ]


def test_a_callback_typed_by_a_function_re_exported_and_a_comment_s_period_no_receiver(
    repo: Path, write_tree
):
    write_tree(
        repo,
        {
            "src/utils/stream.ts": "export class StreamingApi {\n  write(s: string) {}\n}\n",
            "src/streaming/stream.ts": (
                "import type { StreamingApi } from '../utils/stream'\n"  # 1
                "export const stream = (cb: (stream: StreamingApi) => Promise<void>): void => {}\n"
            ),
            "src/streaming/index.ts": "export { stream } from './stream'\n",
            "src/streaming/stream.test.ts": (
                "import { stream } from '.'\n"  # 1
                "stream(async (stream) => {\n"
                "  // the stream is set.\n"
                "  stream.write('a')\n"
                "})\n"  # 5
            ),
        },
    )
    build_index(repo)
    assert uses(service.find_references("StreamingApi.write", repo).text) == [
        "src/streaming/stream.test.ts",
        "(module) 4: stream.write('a')",
    ]

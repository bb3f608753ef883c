"""Tools from an OpenAPI document, calling a small real API: a Starlette app under uvicorn on
127.0.0.1 (port 0), reached by a real client of the generated server (in memory, both eras)."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from jsonrpc_mcp import Server
from jsonrpc_mcp.openapi import OpenAPIError, RouteMap, from_openapi, tools_from_openapi
from jsonrpc_mcp.testing import connect

from ..http.support import serving

pytestmark = [pytest.mark.anyio]

MODERN = "2026-07-28"
ERAS = pytest.mark.parametrize("mode", ["legacy", MODERN])
TIMEOUT = 15.0
KEY = "secret-xyz-123"

# -- the API -------------------------------------------------------------------------------------
PETS: dict[int, dict[str, Any]] = {}
SEEN: list[dict[str, Any]] = []  # what the API received: method, path, query, headers, body


async def _record(request: Request) -> None:
    body = await request.body()
    SEEN.append({
        "method": request.method, "path": request.url.path, "query": list(request.query_params.multi_items()),
        "headers": dict(request.headers), "body": body.decode(),
    })  # fmt: skip


async def list_pets(request: Request) -> Response:
    await _record(request)
    limit = int(request.query_params.get("limit", "100"))
    tags = request.query_params.getlist("tag")
    pets = [p for p in PETS.values() if not tags or p["tag"] in tags]
    return JSONResponse(pets[:limit])


async def create_pet(request: Request) -> Response:
    await _record(request)
    data = await request.json()
    if not isinstance(data.get("name"), str):
        return JSONResponse({"message": "a pet needs a name"}, status_code=422)
    pet = {"id": len(PETS) + 1, "name": data["name"], "tag": data.get("tag")}
    PETS[pet["id"]] = pet
    return JSONResponse(pet, status_code=201)


async def get_pet(request: Request) -> Response:
    await _record(request)
    pet = PETS.get(int(request.path_params["petId"]))
    if pet is None:
        return JSONResponse({"message": f"pet {request.path_params['petId']} not found"}, status_code=404)
    return JSONResponse(pet)


async def delete_pet(request: Request) -> Response:
    await _record(request)
    given = request.headers.get("x-api-key", "")
    if given != KEY:
        return JSONResponse({"error": f"bad key {given}"}, status_code=401)
    PETS.pop(int(request.path_params["petId"]), None)
    return Response(status_code=204)


async def health(request: Request) -> Response:
    return PlainTextResponse("ok")


async def stats(request: Request) -> Response:
    return JSONResponse({"pets": len(PETS)})


API = Starlette(
    routes=[
        Route("/v1/pets", list_pets, methods=["GET"]),
        Route("/v1/pets", create_pet, methods=["POST"]),
        Route("/v1/pets/{petId:int}", get_pet, methods=["GET"]),
        Route("/v1/pets/{petId:int}", delete_pet, methods=["DELETE"]),
        Route("/v1/health", health),
        Route("/v1/admin/stats", stats),
    ]
)

DOCUMENT: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1.2.0", "description": "A pet store."},
    "servers": [{"url": "http://127.0.0.1:1/v1"}],
    "paths": {
        "/pets": {
            "get": {
                "operationId": "listPets",
                "summary": "List the pets",
                "tags": ["pets"],
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}},
                    {"name": "tag", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
                ],
                "responses": {
                    "200": {
                        "description": "the pets",
                        "content": {
                            "application/json": {
                                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}
                            }
                        },
                    }
                },
            },
            "post": {
                "operationId": "createPet",
                "summary": "Add a pet",
                "tags": ["pets"],
                "requestBody": {"$ref": "#/components/requestBodies/NewPet"},
                "responses": {
                    "201": {
                        "description": "made",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}},
                    }
                },
            },
        },
        "/pets/{petId}": {
            "parameters": [{"$ref": "#/components/parameters/PetId"}],
            "get": {
                "operationId": "getPet",
                "summary": "One pet",
                "tags": ["pets"],
                "responses": {
                    "200": {
                        "description": "it",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}},
                    },
                    "404": {"description": "no such pet"},
                },
            },
            "delete": {
                "operationId": "deletePet",
                "tags": ["pets"],
                "parameters": [
                    {"name": "X-Api-Key", "in": "header", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"204": {"description": "gone"}},
            },
        },
        "/health": {"get": {"summary": "Is it up?", "responses": {"200": {"description": "ok"}}}},
        "/admin/stats": {
            "get": {"operationId": "stats", "tags": ["admin"], "responses": {"200": {"description": "n"}}}
        },
    },
    "components": {
        "parameters": {
            "PetId": {"name": "petId", "in": "path", "required": True, "schema": {"type": "integer"}}
        },
        "requestBodies": {
            "NewPet": {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}},
            }
        },
        "schemas": {
            "NewPet": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "tag": {"type": "string", "nullable": True}},
            },
            "Pet": {
                "type": "object",
                "required": ["id", "name"],
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "tag": {"type": "string", "nullable": True},
                    "friends": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}},
                },
            },
        },
    },
}

ROUTES = [
    RouteMap(tags=["admin"], exclude=True),
    RouteMap(pattern=r"^/health$", name="health_check"),
]


class _NoStreams:
    def begin_shutdown(self) -> None:
        pass


@contextlib.asynccontextmanager
async def api() -> AsyncIterator[str]:
    PETS.clear()
    SEEN.clear()
    PETS[1] = {"id": 1, "name": "Rex", "tag": "dog"}
    PETS[2] = {"id": 2, "name": "Tom", "tag": "cat"}
    with anyio.fail_after(TIMEOUT):
        async with serving(API, mcp_app=cast(Any, _NoStreams())) as base:
            yield f"{base}/v1"


def _text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


@pytest.mark.asyncio_only  # uvicorn runs on asyncio only
@ERAS
async def test_the_operations_are_tools_that_call_the_api(mode: str) -> None:
    async with api() as base:
        server = from_openapi(DOCUMENT, base_url=base, route_maps=ROUTES, headers={"X-Trace": "t1"})
        async with connect(server, mode=mode, timeout=TIMEOUT) as client:
            assert (client.server_info["name"], client.server_info["version"]) == ("Pets", "1.2.0")
            assert client.instructions == "A pet store."
            tools = {t["name"]: t for t in await client.list_tools()}
            assert sorted(tools) == ["createPet", "deletePet", "getPet", "health_check", "listPets"]
            listing = tools["listPets"]
            assert listing["description"] == "List the pets"
            assert listing["inputSchema"]["properties"]["limit"] == {"type": "integer", "minimum": 1}
            assert listing["annotations"]["readOnlyHint"] is True
            assert tools["deletePet"]["annotations"]["destructiveHint"] is True
            assert tools["getPet"]["inputSchema"]["required"] == ["petId"]
            assert tools["createPet"]["inputSchema"]["required"] == ["name"]  # the body's properties
            assert tools["createPet"]["inputSchema"]["properties"]["tag"] == {"type": ["string", "null"]}
            assert tools["getPet"]["outputSchema"]["$defs"]["Pet"]["properties"]["friends"]["items"] == {
                "$ref": "#/$defs/Pet"
            }

            # query parameters (an array repeats its key), a header configured once for all
            result = await client.call_tool("listPets", {"limit": 5, "tag": ["dog", "cat"]})
            assert not result.get("isError")
            assert [p["name"] for p in result["structuredContent"]["result"]] == ["Rex", "Tom"]
            assert SEEN[-1]["query"] == [("limit", "5"), ("tag", "dog"), ("tag", "cat")]
            assert SEEN[-1]["headers"]["x-trace"] == "t1"

            # a JSON body made of the arguments
            made = await client.call_tool("createPet", {"name": "Nemo", "tag": None})
            assert made["structuredContent"] == {"id": 3, "name": "Nemo", "tag": None}
            assert SEEN[-1]["method"] == "POST" and SEEN[-1]["headers"]["content-type"] == "application/json"

            # a path parameter
            got = await client.call_tool("getPet", {"petId": 3})
            assert got["structuredContent"]["name"] == "Nemo"
            assert SEEN[-1]["path"] == "/v1/pets/3"
            assert _text(await client.call_tool("health_check")) == "ok"

            # an error status is the tool's error, in one clear line
            missing = await client.call_tool("getPet", {"petId": 99})
            assert missing["isError"] is True
            assert _text(missing) == "GET /pets/{petId} answered HTTP 404 Not Found: pet 99 not found"
            sent = len(SEEN)
            invalid = await client.call_tool("getPet", {"petId": "x"})  # checked before any request
            assert invalid["isError"] is True and "petId" in _text(invalid) and len(SEEN) == sent


@pytest.mark.asyncio_only  # uvicorn runs on asyncio only
async def test_no_secret_reaches_an_error(caplog: pytest.LogCaptureFixture) -> None:
    async with api() as base:
        server = from_openapi(DOCUMENT, base_url=base, headers={"X-Api-Key": KEY})
        async with connect(server, mode="legacy", timeout=TIMEOUT) as client:
            refused = await client.call_tool("deletePet", {"petId": 1, "X-Api-Key": KEY + "-wrong"})
            text = _text(refused)
            assert refused["isError"] is True and text.startswith("DELETE /pets/{petId} answered HTTP 401")
            assert KEY not in text and "[redacted]" in text
            gone = await client.call_tool("deletePet", {"petId": 1, "X-Api-Key": KEY})
            assert gone.get("isError") is not True and _text(gone) == "HTTP 204 No Content"
    assert KEY not in caplog.text


@pytest.mark.asyncio_only  # uvicorn runs on asyncio only
async def test_an_unreachable_api_is_a_tool_error_without_the_url() -> None:
    async with api() as base:
        pass  # (it stopped: nothing listens on its port now)
    async with httpx.AsyncClient(base_url=base, timeout=5.0) as http:
        server = Server("pets")
        tools_from_openapi(server, DOCUMENT, client=http, route_maps=ROUTES, base_url="")
        async with connect(server, mode="legacy", timeout=TIMEOUT) as client:
            result = await client.call_tool("listPets", {"limit": 1})
    assert result["isError"] is True
    assert _text(result) == "GET /pets failed: ConnectError (the API could not be reached)"


def test_references_are_resolved_inside_the_document_only() -> None:
    remote = copy.deepcopy(DOCUMENT)
    remote["components"]["schemas"]["Pet"] = {"$ref": "https://example.com/schemas/pet.json"}
    with pytest.raises(OpenAPIError, match="never fetched"):
        from_openapi(remote, base_url="http://127.0.0.1:1")
    broken = copy.deepcopy(DOCUMENT)
    broken["paths"]["/pets/{petId}"]["parameters"] = [{"$ref": "#/components/parameters/Nope"}]
    with pytest.raises(OpenAPIError, match="does not resolve"):
        from_openapi(broken, base_url="http://127.0.0.1:1")
    with pytest.raises(OpenAPIError, match=r"3\.0 or 3\.1"):
        from_openapi({"swagger": "2.0", "paths": {}}, base_url="http://127.0.0.1:1")


def test_route_maps_select_and_rename_by_method_path_and_tag() -> None:
    only_reads = [
        RouteMap(methods={"GET"}, tags=["pets"], name=lambda op: f"read_{op.operation_id}"),
        RouteMap(exclude=True),
    ]
    server = from_openapi(DOCUMENT, base_url="http://127.0.0.1:1", route_maps=only_reads)
    assert [t.name for t in server.tools] == ["read_listPets", "read_getPet"]
    named = from_openapi(DOCUMENT, route_maps=ROUTES, names={"getPet": "pet", "POST /pets": "add_pet"})
    assert [t.name for t in named.tools] == ["listPets", "add_pet", "pet", "deletePet", "health_check"]


def test_an_openapi_31_document() -> None:
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "Notes", "version": "1"},
        "paths": {"/notes/{id}": {"put": {
            "operationId": "saveNote",
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}},
            "responses": {"200": {"description": "saved", "content": {"application/json": {
                "schema": {"type": ["integer", "null"], "exclusiveMinimum": 0}}}}},
        }}},
    }  # fmt: skip
    server = from_openapi(doc, base_url="http://127.0.0.1:1")
    tool = server.tools.get("saveNote")
    assert tool is not None
    assert tool.input_schema["properties"] == {"id": {"type": "string"}, "body": {"type": "string"}}
    assert tool.output_schema == {
        "type": "object", "properties": {"result": {"type": ["integer", "null"], "exclusiveMinimum": 0}},
        "required": ["result"],
    }  # fmt: skip
    assert tool.annotations == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }

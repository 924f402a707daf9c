"""Ending a call with a JSON-RPC error: outside a component `raise_error`
raises `ProtocolError` (which no `except Exception` in a tool swallows);
inside one it calls the WIT import componentize-py binds as `raise_`."""

import sys
import types
import unittest
from unittest import mock

from toolhost_sdk import Ctx, Plugin, ProtocolError, ToolError, protocol
from toolhost_sdk import _host
from toolhost_sdk.testing import FakeHost

NO_SUCH_JOB = -30001


def jobs() -> Plugin:
    p = Plugin()

    @p.tool(permission="jobs:read", read_only=True)
    def job_status(ctx: Ctx, job: str) -> dict:
        """Answers a job's status.

        Args:
            job: The job's id.
        """
        try:
            if job != "42":
                protocol.raise_error(NO_SUCH_JOB, f"no such job: {job}")
        except Exception:  # a broad handler, as tools have: it must not swallow the raise
            return {"status": "swallowed"}
        return {"status": "done"}

    return p


class Native(unittest.TestCase):
    def test_raising_raises_the_code_and_message_given(self):
        with self.assertRaises(ProtocolError) as e:
            protocol.raise_error(NO_SUCH_JOB, "no such job: 42")
        self.assertEqual((e.exception.code, e.exception.message), (NO_SUCH_JOB, "no such job: 42"))
        self.assertEqual(str(e.exception), "JSON-RPC error -30001: no such job: 42")
        self.assertEqual(repr(e.exception), "ProtocolError(-30001, 'no such job: 42')")

    def test_invalid_params_is_jsonrpcs_code(self):
        self.assertEqual(protocol.INVALID_PARAMS, -32602)
        with self.assertRaises(ProtocolError) as e:
            protocol.raise_error(protocol.INVALID_PARAMS, "job must be digits")
        self.assertEqual(e.exception.code, -32602)

    def test_a_raise_is_no_tool_error_and_passes_through_a_tools_except_exception(self):
        self.assertFalse(issubclass(ProtocolError, Exception))
        self.assertFalse(issubclass(ProtocolError, ToolError))
        p = jobs()
        self.assertEqual(p.call("job_status", {"job": "42"}).structured, '{"status":"done"}')
        with self.assertRaises(ProtocolError) as e:
            p.call("job_status", {"job": "7"})
        self.assertEqual((e.exception.code, e.exception.message), (NO_SUCH_JOB, "no such job: 7"))

    def test_a_fake_host_raises_it_too(self):
        with FakeHost(), self.assertRaises(ProtocolError) as e:
            protocol.raise_error(1001, "over quota")
        self.assertEqual(e.exception.code, 1001)

    def test_the_host_checks_the_codes_rules_not_the_sdk(self):
        for code in (-32603, -31001, -(2**31), 2**31 - 1):
            with self.assertRaises(ProtocolError):
                protocol.raise_error(code, "the host decides")

    def test_arguments_that_do_not_fit_the_wit_signature_are_refused(self):
        for code, message, error in [
            ("-30001", "m", TypeError),
            (True, "m", TypeError),
            (-30001.0, "m", TypeError),
            (2**31, "m", ValueError),
            (-(2**31) - 1, "m", ValueError),
            (-30001, b"m", TypeError),
            (-30001, None, TypeError),
        ]:
            with self.subTest(code=code, message=message), self.assertRaises(error):
                protocol.raise_error(code, message)  # type: ignore[arg-type]


class Raised(Exception):
    """What the fake import raises to stand for the host's trap."""


class InComponent(unittest.TestCase):
    """`WitHost` over fake `wit_world` modules, as componentize-py generates
    them (`wit_world.imports.protocol.raise_`)."""

    def wit_host(self, raise_) -> _host.WitHost:
        imports = types.ModuleType("wit_world.imports")
        for name in ("artifacts", "backend", "checkpoint", "client", "log", "notify", "progress", "resolver"):
            setattr(imports, name, types.ModuleType(f"wit_world.imports.{name}"))
        imports.protocol = types.SimpleNamespace(raise_=raise_)
        world = types.ModuleType("wit_world")
        world.imports = imports
        runtime = types.ModuleType("componentize_py_types")
        runtime.Err = type("Err", (Exception,), {})
        fakes = {"wit_world": world, "wit_world.imports": imports, "componentize_py_types": runtime}
        with mock.patch.dict(sys.modules, fakes):
            return _host.WitHost()

    def test_raising_calls_the_wit_import_with_the_code_and_message(self):
        calls = []

        def raise_(code, message):
            calls.append((code, message))
            raise Raised

        previous = _host.install(self.wit_host(raise_))
        try:
            with self.assertRaises(Raised):
                protocol.raise_error(NO_SUCH_JOB, "no such job: 42")
        finally:
            _host.install(previous)
        self.assertEqual(calls, [(NO_SUCH_JOB, "no such job: 42")])

    def test_a_host_that_returned_from_raise_still_ends_the_call(self):
        host = self.wit_host(lambda code, message: None)
        with mock.patch("os.abort", side_effect=Raised) as abort, self.assertRaises(Raised):
            host.raise_error(NO_SUCH_JOB, "no such job: 42")
        abort.assert_called_once_with()


if __name__ == "__main__":
    unittest.main()

"""Support for the tests written in Python: expectations counted and reported, ctest's skip
code, and the C compiler the tests that build C use."""
import os
import shutil
import sys

SKIP = 77  # ctest's skip code


class Checks:
    """Counts failed expectations; the test exits non-zero when any failed."""

    def __init__(self):
        self.failed = self.count = 0

    def expect(self, ok, what):
        self.count += 1
        if not ok:
            self.failed += 1
            print(f'FAIL: {what}')

    def raises(self, exc, fn, what, status=None):
        """fn() must raise exc (and, for bf16fp32.Error, carry the status name)."""
        try:
            fn()
        except exc as e:
            name = getattr(e, 'name', None)
            self.expect(status is None or name == status, f'{what}: {name} instead of {status}')
            return e
        except Exception as e:  # any other exception is a failure too, not a crash
            self.expect(False, f'{what}: raised {type(e).__name__}: {e}')
            return None
        self.expect(False, f'{what}: did not raise {exc.__name__}')
        return None

    def finish(self, name):
        print(f'{name}: {self.count - self.failed} of {self.count} checks passed')
        sys.exit(1 if self.failed else 0)


def c_compiler(test):
    """$CC, else cc, else gcc; where there is none, says so and exits with SKIP."""
    found = shutil.which(os.environ.get('CC', 'cc')) or shutil.which('gcc')
    if not found:
        print(f'{test}: no C compiler, skipped')
        sys.exit(SKIP)
    return found

# The manifest a reviewer approves: every tool the component describes,
# with its permission, and nothing else. `toolhost plugin pin` adds the
# component's SHA-256.
[plugin]
name = "{{name}}"
version = "0.1.0"
description = "{{description}}"
component = "{{component}}"

[tools.greet]
permission = "{{name}}:read"

"""The first mistake of a hand-written model, `expression: amount`: the error shows the
dialects form with the user's own SQL, so the retry is a copy and paste."""

from __future__ import annotations

import pytest
import yaml

from dosi.compiler.model_compiler import compile_model_text
from dosi.errors import ModelError

MODEL = """\
version: 0.2.0.dev0
semantic_model:
  - name: m
    datasets:
      - name: sales
        source: main.sales
        fields:
          - name: amount
            expression: amount
    metrics:
      - name: revenue
        expression: SUM(sales.amount)
"""


def test_plain_string_expression_names_the_correct_form() -> None:
    with pytest.raises(ModelError) as err:
        compile_model_text(MODEL)
    issues = {d.path: d for d in err.value.issues}
    field = issues["datasets[sales].fields[amount].expression"]
    assert field.code == "invalid_model_value" and field.line == 9
    assert "plain value 'amount'" in field.message
    assert (
        field.hint
        == 'write it as expression: {dialects: [{dialect: ANSI_SQL, expression: "amount"}]}'
    )
    metric = issues["metrics[revenue].expression"]
    assert "SUM(sales.amount)" in (metric.hint or "")
    # the hint is valid YAML that loads: apply it and the model compiles
    fixed = MODEL
    for d in err.value.issues:
        form = (d.hint or "").removeprefix("write it as ")
        value = yaml.safe_load(form)["expression"]["dialects"][0]["expression"]
        fixed = fixed.replace(f"expression: {value}\n", f"{form}\n", 1)
    compile_model_text(fixed)

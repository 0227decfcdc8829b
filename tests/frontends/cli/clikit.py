"""Shared constants of the CLI tests (imported by conftest and the test modules)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SHOP_DIR = REPO / "examples" / "shop"
SHOP_MODEL = SHOP_DIR / "model.yaml"

# A small model over the shop tables with DATUS extensions whose absence changes the numbers
# (--osi-basic): an INNER join to customers (D-JOIN) and a refund total filled with 0 (D-FILL).
MINI_MODEL = """\
version: 0.2.0.dev0
semantic_model:
  - name: mini
    datasets:
      - name: orders
        source: main.orders
        primary_key: [order_id]
        fields:
          - name: order_id
            expression: {dialects: [{dialect: ANSI_SQL, expression: order_id}]}
            datatype: Integer
          - name: customer_id
            expression: {dialects: [{dialect: ANSI_SQL, expression: customer_id}]}
            datatype: Integer
          - name: order_date
            expression: {dialects: [{dialect: ANSI_SQL, expression: order_date}]}
            datatype: Date
            dimension: {is_time: true}
          - name: status
            expression: {dialects: [{dialect: ANSI_SQL, expression: status}]}
            datatype: String
          - name: amount
            expression: {dialects: [{dialect: ANSI_SQL, expression: amount}]}
            datatype: Decimal
      - name: customers
        source: main.customers
        primary_key: [customer_id]
        fields:
          - name: customer_id
            expression: {dialects: [{dialect: ANSI_SQL, expression: customer_id}]}
            datatype: Integer
          - name: segment
            expression: {dialects: [{dialect: ANSI_SQL, expression: segment}]}
            datatype: String
    relationships:
      - name: orders_to_customers
        from: orders
        to: customers
        from_columns: [customer_id]
        to_columns: [customer_id]
        custom_extensions:
          - vendor_name: DATUS
            data: '{"v": "1.0", "join_type": "inner"}'
    metrics:
      - name: revenue
        expression: {dialects: [{dialect: ANSI_SQL, expression: SUM(orders.amount)}]}
        datatype: Decimal
      - name: cancelled_revenue
        expression:
          dialects:
            - dialect: ANSI_SQL
              expression: SUM(CASE WHEN orders.status = 'cancelled' THEN orders.amount END)
        datatype: Decimal
        custom_extensions:
          - vendor_name: DATUS
            data: '{"v": "1.0", "fill_nulls_with": 0}'
"""

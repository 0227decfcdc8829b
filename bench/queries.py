"""Benchmark queries over the shop example: each a metric query and a hand-written equivalent.

The hand-written SQL is what a careful analyst writes on DuckDB: DATE-typed bounds, grouping
by the raw date before rolling up to the month, one scan per fact table.
"""

from __future__ import annotations

from typing import Any

Q = dict[str, Any]

CASES: list[tuple[str, Q, str]] = [
    (
        "revenue_by_month",
        {"metrics": ["revenue"], "group_by": ["metric_time:month"]},
        """
        WITH d AS (SELECT order_date, SUM(amount) AS v FROM orders GROUP BY order_date)
        SELECT DATE_TRUNC('month', order_date) AS metric_time__month, SUM(v) AS revenue
        FROM d GROUP BY 1 ORDER BY 1
        """,
    ),
    (
        "revenue_orders_by_channel",
        {"metrics": ["revenue", "order_count"], "group_by": ["orders.channel"]},
        """
        SELECT channel, SUM(amount) AS revenue, COUNT(order_id) AS order_count
        FROM orders GROUP BY 1 ORDER BY 1
        """,
    ),
    (
        "revenue_by_region_2024",
        {
            "metrics": ["revenue"],
            "group_by": ["regions.region_name"],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
        },
        """
        SELECT r.region_name, SUM(o.amount) AS revenue
        FROM orders o LEFT JOIN customers c ON o.customer_id = c.customer_id
        LEFT JOIN regions r ON c.region_id = r.region_id
        WHERE o.order_date >= DATE '2024-01-01' AND o.order_date < DATE '2025-01-01'
        GROUP BY 1 ORDER BY 1
        """,
    ),
    (
        "aov_by_segment_quarter",
        {"metrics": ["avg_order_value"], "group_by": ["customers.segment", "metric_time:quarter"]},
        """
        WITH d AS (
          SELECT c.segment, o.order_date, SUM(o.amount) AS s, COUNT(o.order_id) AS n
          FROM orders o LEFT JOIN customers c ON o.customer_id = c.customer_id
          GROUP BY 1, 2)
        SELECT segment, DATE_TRUNC('quarter', order_date) AS metric_time__quarter,
               CAST(SUM(s) AS DOUBLE) / NULLIF(SUM(n), 0) AS avg_order_value
        FROM d GROUP BY 1, 2 ORDER BY 1, 2
        """,
    ),
    (
        "customers_by_month",
        {"metrics": ["customer_count"], "group_by": ["metric_time:month"]},
        """
        SELECT DATE_TRUNC('month', order_date) AS metric_time__month,
               COUNT(DISTINCT customer_id) AS customer_count
        FROM orders GROUP BY 1 ORDER BY 1
        """,
    ),
    (
        "completed_revenue_by_status",
        {
            "metrics": ["completed_revenue", "revenue"],
            "group_by": ["orders.status"],
            "where_sql": "orders.channel IN ('web', 'mobile')",
        },
        """
        SELECT status, SUM(CASE WHEN status = 'completed' THEN amount END) AS completed_revenue,
               SUM(amount) AS revenue
        FROM orders WHERE channel IN ('web', 'mobile') GROUP BY 1 ORDER BY 1
        """,
    ),
    (
        "items_by_category",
        {"metrics": ["items_sold"], "group_by": ["products.category"]},
        """
        SELECT p.category, SUM(i.quantity) AS items_sold
        FROM order_items i JOIN products p ON i.product_id = p.product_id
        GROUP BY 1 ORDER BY 1
        """,
    ),
    (
        "revenue_and_refunds_by_month",
        {"metrics": ["revenue", "refund_total"], "group_by": ["metric_time:month"]},
        """
        WITH a AS (SELECT DATE_TRUNC('month', order_date) AS k, SUM(amount) AS revenue
                   FROM orders GROUP BY 1),
             b AS (SELECT DATE_TRUNC('month', refund_date) AS k, SUM(refund_amount) AS r
                   FROM refunds GROUP BY 1)
        SELECT COALESCE(a.k, b.k) AS metric_time__month, a.revenue, COALESCE(b.r, 0) AS refund_total
        FROM a FULL OUTER JOIN b ON a.k IS NOT DISTINCT FROM b.k ORDER BY 1
        """,
    ),
    (
        "revenue_mom",
        {
            "metrics": ["revenue", "revenue_mom"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
        },
        """
        WITH d AS (SELECT order_date, SUM(amount) AS v FROM orders
                   WHERE order_date >= DATE '2023-12-01' AND order_date < DATE '2025-01-01'
                   GROUP BY 1),
             m AS (SELECT DATE_TRUNC('month', order_date) AS t, SUM(v) AS v FROM d GROUP BY 1)
        SELECT c.t AS metric_time__month, c.v AS revenue,
               CAST(c.v - p.v AS DOUBLE) / NULLIF(p.v, 0) AS revenue_mom
        FROM m c LEFT JOIN m p ON p.t = c.t - INTERVAL 1 MONTH
        WHERE c.t >= DATE '2024-01-01' ORDER BY 1
        """,
    ),
    (
        "revenue_ytd_by_channel",
        {
            "metrics": ["revenue_ytd"],
            "group_by": ["orders.channel", "metric_time:month"],
            "time_range": {"start": "2024-04-01", "end": "2025-01-01"},
        },
        """
        WITH d AS (SELECT channel, order_date, SUM(amount) AS v FROM orders
                   WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2025-01-01'
                   GROUP BY 1, 2),
             m AS (SELECT channel, DATE_TRUNC('month', order_date) AS t, SUM(v) AS v
                   FROM d GROUP BY 1, 2),
             w AS (SELECT channel, t, SUM(v) OVER (PARTITION BY channel, DATE_TRUNC('year', t)
                          ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS ytd
                   FROM m)
        SELECT channel, t AS metric_time__month, ytd AS revenue_ytd FROM w
        WHERE t >= DATE '2024-04-01' ORDER BY 1, 2
        """,
    ),
    (
        "revenue_rolling_3m",
        {"metrics": ["revenue_rolling_3m"], "group_by": ["metric_time:month"]},
        """
        WITH d AS (SELECT order_date, SUM(amount) AS v FROM orders GROUP BY 1),
             m AS (SELECT DATE_TRUNC('month', order_date) AS t, SUM(v) AS v FROM d GROUP BY 1)
        SELECT t AS metric_time__month,
               AVG(v) OVER (ORDER BY t ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
                 AS revenue_rolling_3m
        FROM m ORDER BY 1
        """,
    ),
    (
        "revenue_yoy_by_quarter",
        {"metrics": ["revenue_yoy"], "group_by": ["metric_time:quarter"]},
        """
        WITH d AS (SELECT order_date, SUM(amount) AS v FROM orders GROUP BY 1),
             m AS (SELECT DATE_TRUNC('quarter', order_date) AS t, SUM(v) AS v FROM d GROUP BY 1)
        SELECT c.t AS metric_time__quarter, c.v - p.v AS revenue_yoy
        FROM m c LEFT JOIN m p ON p.t = c.t - INTERVAL 1 YEAR ORDER BY 1
        """,
    ),
    (
        # issue 27 item 4: the running total at day grain, the slowest against hand SQL. The
        # hand SQL is the fastest form found on DuckDB 2.0: the day aggregate with a no-op
        # COUNT(*) beside its lone SUM (docs/performance.md), the window over it.
        "revenue_running_by_day",
        {"metrics": ["revenue_running"], "group_by": ["metric_time:day"]},
        """
        WITH d AS (SELECT order_date, SUM(amount) AS v FROM orders GROUP BY 1
                   HAVING COUNT(*) > 0)
        SELECT order_date AS metric_time__day,
               SUM(v) OVER (ORDER BY order_date ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                 AS revenue_running
        FROM d ORDER BY 1
        """,
    ),
    (
        "revenue_by_day",
        {"metrics": ["revenue"], "group_by": ["metric_time:day"]},
        """
        SELECT order_date AS metric_time__day, SUM(amount) AS revenue FROM orders
        GROUP BY 1 HAVING COUNT(*) > 0 ORDER BY 1
        """,
    ),
    (
        "channel_rank",
        {"metrics": ["revenue", "revenue_rank"], "group_by": ["orders.channel"]},
        """
        WITH m AS (SELECT channel, SUM(amount) AS v FROM orders GROUP BY 1)
        SELECT channel, v AS revenue, DENSE_RANK() OVER (ORDER BY v DESC) AS revenue_rank
        FROM m ORDER BY 1
        """,
    ),
    (
        "events_by_week",
        {"metrics": ["event_count", "active_users"], "group_by": ["metric_time:week"]},
        """
        SELECT DATE_TRUNC('week', event_ts) AS metric_time__week, COUNT(event_id) AS event_count,
               COUNT(DISTINCT user_id) AS active_users
        FROM events GROUP BY 1 ORDER BY 1
        """,
    ),
]

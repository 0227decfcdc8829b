connection: "shop"
include: "*.view.lkml"

explore: orders {
  join: customers {
    type: left_outer
    relationship: many_to_one
    sql_on: ${orders.customer_id} = ${customers.id} ;;
  }
  join: payments {
    type: inner
    relationship: one_to_many
    sql_on: ${orders.id} = ${payments.order_id} ;;
  }
}

explore: payments {
  join: orders {
    relationship: many_to_one
    foreign_key: order_id
  }
}
